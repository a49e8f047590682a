// Ends the walk at a thread caught at its first instruction, just after the
// clone or clone3 system call that made it returned 0 in it (Linux, x86-64
// and arm64). The thread's new stack holds nothing of a caller, and what
// unwind information covers the instruction describes the parent: glibc's
// x86-64 clone.S and clone3.S end their CFI before the syscall ("in the child
// the unwind info will be wrong"), so gdb shows a frame at 0 above it and the
// fallbacks would report no_unwind_info; glibc's arm64 __clone keeps its CFI
// over it (return address in x30), which names the parent's caller and then
// follows the parent's frame records (x29) as if they were the child's. So
// this is asked before the CFI. Its parent, at the same instruction with the
// new thread's id as the result, and a forked process's child, given no new
// stack, have callers: this leaves them to the others.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class ThreadBirthUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

} // namespace stackwalk
