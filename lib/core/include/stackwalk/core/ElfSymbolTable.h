// A linked ELF file's function and data symbols by address, chosen as LLVM
// 19's symbolizer (SymbolizableObjectFile) chooses them, read from the
// file's typed symbol array. LLVM reads each symbol through its generic
// SymbolRef, which looks the symbol's table, section and string table up
// again per call: indexing libc's 10,000 symbols that way was a third of a
// small walk without DWARF, and ran only after the walk had waited for the
// DWARF (LLVM's module takes both at once).
//
// What LLVM keeps: the symbols of .symtab (else .dynsym) that are in a
// loaded (SHF_ALLOC) section and of type NOTYPE, FUNC, OBJECT or GNU_IFUNC, less the
// architecture's mapping symbols; at each address the one with the largest
// size (the last in the table among equals). A symbol whose size is 0 runs
// to the next one. A local symbol's file is the STT_FILE symbol before it.
//
// Where it differs on purpose: a symbol whose size is 0 (an assembly label,
// or _init from crti.o) runs no further than the end of its own section, as
// gdb keeps a minimal symbol to its section; LLVM lets it run into the next
// section, naming .plt's stubs `_init+0x30`.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace llvm::object {
class ObjectFile;
}

namespace stackwalk {

class ElfSymbolTable {
public:
  // nullopt where this reading could differ from LLVM's: not a 32- or 64-bit
  // little-endian linked ELF file of x86, x86-64, ARM or AArch64, extended
  // section indices, a string table or name LLVM would refuse (a nameless
  // section symbol's included: LLVM names it after its section). Let LLVM
  // read those files (llvmReadsSymbolNamesInBounds says when it safely can).
  static std::optional<ElfSymbolTable> read(const llvm::object::ObjectFile &object);

  struct Symbol {
    llvm::StringRef name;
    uint64_t start = 0;
    uint64_t size = 0;
    llvm::StringRef file; // a local symbol's STT_FILE name; else empty
    bool function = false; // STT_FUNC or STT_GNU_IFUNC: code that starts at `start`
  };
  // The symbol holding the file address, as LLVM's getNameFromSymbolTable gives it.
  std::optional<Symbol> at(uint64_t address) const;
  // Every symbol of that name.
  std::vector<Symbol> named(llvm::StringRef name) const;

private:
  struct Entry {
    uint64_t start;
    uint64_t size;
    uint32_t name;           // offset in the string table; NoName: nothing is named from `start` on
    uint32_t localIndex : 31; // index in the symbol table of a local symbol; 0 for others
    uint32_t function : 1;   // Symbol::function
  };
  struct FileSymbol {
    uint32_t index;
    uint32_t name;
  };
  static constexpr uint32_t NoName = UINT32_MAX;
  template <typename ELFT> friend class ElfSymbolTableReader;
  Symbol describe(const Entry &entry) const;

  llvm::StringRef strings_;
  std::vector<Entry> entries_;   // by start, one per address
  std::vector<FileSymbol> files_; // by index
};

// Whether LLVM 19's symbolizer reads every name of the file's symbol table
// in bounds. It names a nameless section symbol after its section, and for one
// in no section (index 0, or reserved) reads the section header one past the
// table (fuzz/findings/llvm19-elf-nameless-section-symbol-in-no-section). A
// file ElfSymbolTable does not read goes to LLVM only when this holds.
bool llvmReadsSymbolNamesInBounds(const llvm::object::ObjectFile &object);
// The same for every symbol table of the file, .symtab and .dynsym both, as
// ModuleImage's index of names reads them (found by fuzz_module_image: a
// 32-bit file's .dynsym; fuzz/findings/llvm19-elf-nameless-section-symbol-in-dynsym).
bool llvmReadsAllSymbolNamesInBounds(const llvm::object::ObjectFile &object);

} // namespace stackwalk
