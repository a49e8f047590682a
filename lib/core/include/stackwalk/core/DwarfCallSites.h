// The records of calls DWARF keeps (DW_TAG_call_site, DW_TAG_GNU_call_site
// before DWARF 5), DIE by DIE: what the tail-call frames and entry values of
// lib/debuginfo read, and what a symbol map (SymbolMap.h) keeps of them.
#pragma once

#include "llvm/DebugInfo/DWARF/DWARFDie.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace stackwalk {

constexpr size_t MaxDiesVisited = 200000; // one function's DIEs searched for a call site

bool isCallSite(const llvm::DWARFDie &die);

// Calls `visit` on each call site in the function, inlined bodies included,
// until it returns true.
template <typename Visit> void forEachCallSite(const llvm::DWARFDie &function, Visit visit) {
  std::vector<llvm::DWARFDie> pending{function};
  for (size_t visited = 0; !pending.empty() && visited < MaxDiesVisited; ++visited) {
    llvm::DWARFDie die = pending.back();
    pending.pop_back();
    if (isCallSite(die)) {
      if (visit(die)) return;
      continue;
    }
    for (const llvm::DWARFDie &child : die.children()) pending.push_back(child);
  }
}

// The address the call returns to (a file address), as its record gives it.
std::optional<uint64_t> callSiteReturnPc(const llvm::DWARFDie &site);

// Whether a call site's record says the call is a tail call (a jump).
bool isTailCall(const llvm::DWARFDie &site);

// The function a call site's record names as its callee.
llvm::DWARFDie calledFunction(const llvm::DWARFDie &site);

} // namespace stackwalk
