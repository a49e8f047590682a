// --unwind-info: the unwind data that governs an address, found the way the
// walk finds it (a PE image's function table, else the module's DWARF CFI),
// for manual stack reconstruction as WinDbg's .fnent and .eh_frame dumps give.
#pragma once

#include "stackwalk/walk/WalkSession.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace stackwalk {

struct UnwindInfoReport {
  uint64_t address = 0;
  const Module *module = nullptr;
  std::string function;          // the symbol at the address, empty when unknown
  std::optional<uint64_t> functionOffset;
  std::string kind;              // "Windows x64 unwind info" or "DWARF CFI"
  std::vector<std::string> lines; // the description, as the unwinders give it
};

// `where` is an address (0x7ff6a0001789), `module+0xOFFSET`, or
// `module!function` (the symbol table's spelling) with an optional
// `+0xOFFSET`, as the text output writes frames. An address outside every
// module, an unknown module or symbol is a request error.
llvm::Expected<UnwindInfoReport> unwindInfoAt(const Target &target, WalkSession &session, llvm::StringRef where);

} // namespace stackwalk
