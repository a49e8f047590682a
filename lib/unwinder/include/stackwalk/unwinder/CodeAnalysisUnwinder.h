// The caller of a frame in x86 code that no unwind table describes (musl's
// libc, programs built with -fno-asynchronous-unwind-tables), from the
// function's own instructions: its start by its ELF symbol (STT_FUNC), and
// what the code from there up to the frame's address did to the stack
// (X86CodeAnalysis). gdb follows a frame-pointer prologue so, LLDB any stack
// adjustment; where neither the unwind tables nor this reach, the frame
// pointer and the stack scan guess.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class CodeAnalysisUnwinder : public Unwinder {
public:
  // The most code decoded from a function's start to the frame's address.
  static constexpr uint64_t MaxFunctionBytes = 64 * 1024;
  // `requireReturnAddress`: a caller only where the analysed frame returns to
  // code after a call (or to a signal trampoline), as the walk takes one.
  // Without it, the caller the analysis reads whatever it holds: the stack
  // scan unwinds its candidates so, and a stale copy of a return address
  // leads to a value that is none (StackScanUnwinder's unwind data).
  explicit CodeAnalysisUnwinder(bool requireReturnAddress = true) : requireReturnAddress_(requireReturnAddress) {}
  FrameTrust trust() const override { return FrameTrust::CodeAnalysis; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  bool requireReturnAddress_;
};

} // namespace stackwalk
