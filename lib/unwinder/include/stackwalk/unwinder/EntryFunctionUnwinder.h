// Ends the walk at the program's entry function (_start, the function at the
// executable's ELF entry point), as gdb does ("backtrace past-entry" is off by
// default): nothing called it. Its CFI usually says so (x86-64's and arm64's
// _start mark the return address undefined); i386's _start has no CFI at all,
// and a scan above it finds only stale words of the dynamic loader's.
//
// A module known by its Breakpad symbol file alone: the function the file
// names at the process's entry point (AT_ENTRY, from the dump's auxiliary
// vector). dump_syms cannot write _start's undefined return address, so the
// file's STACK CFI for it is its entry rule, which would read a caller from
// the arguments _start passed (main's address: a frame past _start in
// Breakpad's walks); this step must come before the symbol file's CFI.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <map>

namespace stackwalk {

class EntryFunctionUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  struct Range {
    uint64_t start = 0, size = 0; // file addresses
  };
  // The entry function of each executable image met, by image: one dump's only.
  std::map<const ModuleImage *, std::optional<Range>> entryFunctions_;
};

} // namespace stackwalk
