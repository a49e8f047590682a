// The records of calls DWARF keeps (DW_TAG_call_site, DW_TAG_GNU_call_site
// before DWARF 5): finding them, and the functions they name.
#pragma once

#include "FrameScope.h"

#include "llvm/DebugInfo/DWARF/DWARFDie.h"

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

// The call site whose return address is `returnPc` (a file address).
llvm::DWARFDie findCallSite(const llvm::DWARFDie &function, uint64_t returnPc);

// The same function: one DIE, or one the other's abstract origin or specification.
bool sameFunction(const llvm::DWARFDie &a, const llvm::DWARFDie &b);
// The same name (linkage or short) on both.
bool sameName(const llvm::DWARFDie &a, const llvm::DWARFDie &b);

// The function a call site names, in the module of the frame it led to: the
// record may be a declaration (a function of another unit or module), whose
// definition is the function the DWARF has at the symbol's address.
llvm::DWARFDie definitionOf(const llvm::DWARFDie &function, bool sameModule, const FrameScope &scope);

// The function a call site's record names as its callee.
llvm::DWARFDie calledFunction(const llvm::DWARFDie &site);

// Whether `candidate` (a function a call site names) is the callee's function.
bool isFunction(const llvm::DWARFDie &candidate, const FrameScope &callee, bool sameModule);

} // namespace stackwalk
