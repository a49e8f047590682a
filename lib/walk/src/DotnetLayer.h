// .NET's part in the walk (ManagedRuntime for CoreCLR): managed code named
// from the runtime's metadata with its MethodDesc, and the runtime's
// capital-F Frames as entries of their own at their place.
#pragma once

#include "stackwalk/walk/ManagedRuntime.h"

#include "stackwalk/frames/DotnetRuntime.h"

#include <memory>

namespace stackwalk {

// The process's CoreCLR, through its contract descriptor.
class DotnetLayer : public ManagedRuntime {
public:
  explicit DotnetLayer(std::unique_ptr<frames::DotnetRuntime> runtime) : runtime_(std::move(runtime)) {}
  RuntimeSummary summary() const override;
  RuntimeDetails details() const override;
  std::unique_ptr<ManagedThreadWalk> beginThread(ReportThread &thread, bool runtimeWalkOnly) override;

private:
  std::unique_ptr<frames::DotnetRuntime> runtime_;
};

} // namespace stackwalk
