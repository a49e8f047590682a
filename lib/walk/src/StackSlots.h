// --args on 32-bit x86 for a function no debug info describes: the raw words
// above its return address, where its caller pushed any arguments (WinDbg's
// kb lists them as "Args to Child"). They are listed as stack words, never as
// arguments: nothing says how many the function takes, or that it has not
// overwritten them since.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stackwalk {

// The words at the caller's stack pointer of physical frame `index`: as many
// as the module's symbol file gives the function's parameters (STACK WIN or
// FUNC/PUBLIC records), else three, as kb shows; those the dump holds. Empty
// on other architectures, where arguments are passed in registers, and for
// the outermost frame.
std::vector<uint64_t> stackSlotsAbove(const Target &target, const std::vector<Frame> &frames, size_t index);

} // namespace stackwalk
