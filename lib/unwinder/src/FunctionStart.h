// Where the function holding an address starts, by the ELF symbol table of
// its module's file (or its debug file's), for unwinders that read a
// function's code or compare two addresses' functions without unwind info.
#pragma once

#include "stackwalk/core/Target.h"

#include <optional>

namespace stackwalk {

// A function symbol whose extent holds `address`, not the part GCC moved out
// of line (`f.cold`: entered by a jump from the body, with the body's frame).
// An asm function's symbol often has no size; it runs to the next symbol.
std::optional<uint64_t> functionStart(const Target &target, uint64_t address);

} // namespace stackwalk
