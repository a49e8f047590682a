// Ends the walk at a thread caught at its first instruction, just after the
// clone or clone3 system call that made it returned 0 in it (x86-64 Linux).
// glibc ends clone3's and clone's CFI before that syscall, since in the new
// thread nothing it describes holds (clone3.S: "End FDE now, because in the
// child the unwind info will be wrong"), so no unwind table covers the
// instruction; the thread's new stack holds nothing of a caller. gdb shows a
// frame at 0 above it; the fallbacks would report no_unwind_info. Its parent,
// at the same instruction with the new thread's id in rax, has a caller: this
// leaves it to the others.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class ThreadBirthUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

} // namespace stackwalk
