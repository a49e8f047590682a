// Signal frames recognised by their code: a handler returns into a trampoline
// that calls rt_sigreturn, and the interrupted registers lie in the signal
// frame at the stack pointer.
//
// The kernel's arm64 vDSO describes its `__kernel_rt_sigreturn` with CFI, which
// the CFI unwinder reads first; this unwinder is for trampolines without any:
// qemu-user gives arm64 guests no vDSO, only a bare page holding the same two
// instructions (`mov x8, #139; svc #0`). gdb recognises the kernel's
// trampoline by these instructions too (aarch64-linux-tdep.c). On 32-bit ARM,
// glibc's restorers (mov r7, #173 or #119; svc #0, ARM or Thumb) carry EHABI
// data that restores the registers but does not say the frame was
// interrupted; they are read here, as gdb's arm-linux-tdep.c reads them.
// On x86-64, glibc's __restore_rt has CFI, which describes the frame where
// libc's file is at hand; without it (a core leaves libc's text out), the
// restorer's code cannot be read, and the signal frame is recognised by the
// ucontext the kernel wrote at the stack pointer. Linux x86-64, arm64 and ARM.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class SigreturnUnwinder : public Unwinder {
public:
  // The caller's registers are the context the kernel saved, as frame 0's are.
  FrameTrust trust() const override { return FrameTrust::Context; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
  bool isSignalTrampoline(const Frame &frame, const Target &target) override;
};

} // namespace stackwalk
