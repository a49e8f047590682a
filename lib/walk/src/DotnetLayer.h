// The .NET side of a thread's report: which physical frames are managed
// code (named from the runtime's metadata, with their MethodDesc), and the
// runtime's capital-F Frames as entries of their own at their place.
#pragma once

#include "Report.h"

#include "stackwalk/frames/ManagedUnwinders.h"

#include <memory>
#include <vector>

namespace stackwalk {

// Opens the process's runtime; a process with a runtime that cannot be read
// gets a warning saying why, one without a runtime nothing.
std::unique_ptr<frames::DotnetRuntime> openRuntime(const Target &target, std::vector<std::string> &warnings);

// One thread's runtime state for its walk.
class ManagedThread {
public:
  ManagedThread(frames::DotnetRuntime &runtime, ReportThread &thread);

  // The unwinders the runtime adds: managed code first, the Frame chain
  // after the native unwinders that can read unwind info.
  Unwinder *codeUnwinder() { return &code_; }
  Unwinder *frameUnwinder() { return frameUnwinder_.get(); }

  // Appends the entries of one physical frame: first the runtime Frames
  // that live in its stack frame (below `callerSp`), then the frame itself
  // if it is managed code. False when the frame is not managed code.
  bool addEntries(ReportThread &thread, const Frame &frame, std::optional<uint64_t> callerSp);

private:
  void addRuntimeFrame(ReportThread &thread, const frames::RuntimeFrame &frame, const Frame &at);

  frames::DotnetRuntime &runtime_;
  frames::ManagedCodeUnwinder code_;
  std::vector<frames::RuntimeFrame> chain_;
  std::unique_ptr<frames::RuntimeFrameUnwinder> frameUnwinder_;
  size_t nextFrame_ = 0;
};

// --managed-only: the managed frames and runtime Frames, renumbered.
void keepManagedOnly(ReportThread &thread);

} // namespace stackwalk
