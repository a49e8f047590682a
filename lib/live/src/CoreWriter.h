// An ELF core file of what was read from a stopped process (--save-core):
// its threads' registers, the pages read while it was stopped, and the notes
// gdb and stackwalk need to read it later (NT_PRSTATUS, NT_PRPSINFO,
// NT_AUXV, NT_FILE); code and other file contents stay in the files, as a
// core written with the kernel's default coredump_filter leaves them. LLVM
// writes no core files, so the layout is written here, from <linux/elfcore.h>.
#pragma once

#include "stackwalk/core/Target.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk::live {

struct CoreContents {
  uint32_t pid = 0;
  std::string name, arguments;
  struct Thread {
    uint32_t tid = 0;
    std::vector<uint8_t> userRegs; // x86-64's user_regs_struct, as PTRACE_GETREGSET gave it
    std::vector<uint8_t> fpRegs;   // its user_fpregs_struct (NT_PRFPREG), when read
    std::vector<uint8_t> xstate;   // its XSAVE image (NT_X86_XSTATE), when read
  };
  std::vector<Thread> threads; // the main thread first: gdb's current thread
  std::vector<uint8_t> auxv;
  std::vector<elfcore::FileMapping> files;
  std::vector<MemoryRegion> regions; // the mappings' permissions
  struct Range {
    uint64_t address;
    std::vector<uint8_t> bytes;
  };
  std::vector<Range> memory; // sorted, not overlapping
};

llvm::Error writeElfCore(const std::string &path, const CoreContents &contents);

} // namespace stackwalk::live
