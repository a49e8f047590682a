// A linked ELF file's PLT stubs (.plt, .plt.got and .plt.sec), each named
// after the function whose GOT slot it jumps through, with gdb's and
// llvm-objdump's `@plt` suffix: no symbol covers them, so a frame stopped in
// one (a thread caught calling into another module) would otherwise be
// unnamed, or, by LLVM's rule for _init's size 0, named `_init+0x30`.
//
// The slot is read from the stub's indirect jump, which linkers write in a
// few fixed forms: x86-64 `jmp *slot(%rip)`, i386 `jmp *slot` and `jmp
// *offset(%ebx)` (ebx holding .got.plt's address), AArch64 `adrp x16; ldr
// x17, [x16, #offset]`; x86 stubs may begin with `endbr64`/`endbr32` and a
// `bnd` prefix, AArch64's with `bti c`. ARM's stubs are not read. These are
// the forms llvm-objdump finds (MCInstrAnalysis::findPltEntries) and matched
// the same way, by their bytes; LLVM's analysis is not used because it comes
// only with LLVM's whole X86 and AArch64 MC layers, whose relocated tables
// cost every run about 530 page faults and 3 ms at start-up (measured). The
// slot's function is the symbol of its JUMP_SLOT or GLOB_DAT relocation.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm::object {
class ObjectFile;
}

namespace stackwalk {

class PltStubs {
public:
  // Empty for a file that is not a linked little-endian ELF file of those
  // machines, or has no PLT sections with contents (a separate debug file).
  static PltStubs read(const llvm::object::ObjectFile &object);

  struct Stub {
    uint64_t start, end; // file addresses
    uint64_t slot;       // the GOT slot's file address
    std::string name;    // "strlen@plt"
  };
  // The stub holding the file address, or null.
  const Stub *at(uint64_t address) const;
  const std::vector<Stub> &stubs() const { return stubs_; }

  // Whether stubs are read from a section of this name.
  static bool isPltSection(llvm::StringRef name) { return name == ".plt" || name == ".plt.got" || name == ".plt.sec"; }

private:
  template <typename ELFT> friend class PltStubsReader;
  std::vector<Stub> stubs_; // by start, not overlapping
};

} // namespace stackwalk
