// The .NET runtime's part in a mixed-mode walk (StackWalk.md's algorithm,
// with native frames kept): managed code is unwound by the Windows x64
// unwind codes the runtime records for it, on every OS; where native
// unwinding cannot go on (stubs without unwind info), the thread's next
// capital-F Frame carries the walk to the managed code it returns to.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/frames/DotnetRuntime.h"
#include "stackwalk/frames/RuntimeFrames.h"

#include <string>
#include <vector>

namespace stackwalk::frames {

class ManagedCodeUnwinder : public Unwinder {
public:
  explicit ManagedCodeUnwinder(DotnetRuntime &runtime) : runtime_(runtime) {}
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
  // The runtime's code map: JIT code, stubs and ReadyToRun code.
  bool describesCodeAt(uint64_t address, const Target &target) override;

private:
  DotnetRuntime &runtime_;
};

// One thread's Frame chain, used from the innermost Frame outwards.
class RuntimeFrameUnwinder : public Unwinder {
public:
  // `chain` must outlive the unwinder.
  RuntimeFrameUnwinder(DotnetRuntime &runtime, const std::vector<RuntimeFrame> &chain)
      : runtime_(runtime), chain_(chain) {}
  FrameTrust trust() const override { return FrameTrust::RuntimeFrame; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
  // The context a Frame of the chain saved of an interrupted one (a fault) with
  // this ip, and this sp or one on another stack.
  std::optional<RegisterFile> recordedInterruption(uint64_t ip, uint64_t sp, const Target &target) override;

private:
  DotnetRuntime &runtime_;
  const std::vector<RuntimeFrame> &chain_;
};

// A thread the GC suspended by hijacking a return address: the managed
// method's return went to the runtime's stub (OnHijackTripThread) instead,
// which pushed the registers (HijackArgs) and called into the runtime, whose
// HijackFrame records them. The stub is entered by a ret, not a call, but its
// unwind data describes it as called, and so reads a local of the hijacked
// method as its return address. The frame whose stack holds the HijackArgs
// (the stub's: above the Frame, which the function it called pushed) resumes
// at the Frame's registers instead, as the runtime's own walk and ClrMD do.
class HijackUnwinder : public Unwinder {
public:
  HijackUnwinder(DotnetRuntime &runtime, const std::vector<RuntimeFrame> &chain);
  FrameTrust trust() const override { return FrameTrust::RuntimeFrame; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  DotnetRuntime &runtime_;
  // The chain's HijackFrames, by address: asked of every frame, the search
  // is one lookup, however long a dump's chain.
  std::vector<RuntimeFrame> hijacks_;
};

} // namespace stackwalk::frames
