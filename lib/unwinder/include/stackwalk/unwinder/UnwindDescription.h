// --unwind-info: the unwind data that governs one address, in words, for a
// person rebuilding a stack by hand (WinDbg's .fnent, llvm-dwarfdump
// --eh-frame). DWARF CFI is described by CfiUnwinder::describe.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk {

// Windows x64: the RUNTIME_FUNCTION of the image at `imageBase` that covers
// `address` (an indirect entry followed), its UNWIND_INFO (address, version,
// flags, prolog size, frame register and offset), each unwind code decoded
// (prolog offset, operation, register, stack offset or size), the handler's
// RVA, and each chained entry in turn. A leaf (no entry) is said to be one.
llvm::Expected<std::vector<std::string>> describeWin64Unwind(const MemorySource &memory, uint64_t imageBase,
                                                             uint64_t address);

// Windows ARM64: the RUNTIME_FUNCTION covering `address`, its packed data or
// .xdata record (function length, epilog scopes), each unwind code decoded,
// and where the address lies (prolog, epilog, body) with the codes that apply.
llvm::Expected<std::vector<std::string>> describeArm64Unwind(const MemorySource &memory, uint64_t imageBase,
                                                             uint64_t address);

} // namespace stackwalk
