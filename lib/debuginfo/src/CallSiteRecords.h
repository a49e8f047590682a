// Call-site records (stackwalk/core/DwarfCallSites.h) as the frames of a
// walk need them: finding one, and the functions they name.
#pragma once

#include "FrameScope.h"

#include "stackwalk/core/DwarfCallSites.h"

#include "llvm/DebugInfo/DWARF/DWARFDie.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace stackwalk {

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

// Whether `candidate` (a function a call site names) is the callee's function.
bool isFunction(const llvm::DWARFDie &candidate, const FrameScope &callee, bool sameModule);

} // namespace stackwalk
