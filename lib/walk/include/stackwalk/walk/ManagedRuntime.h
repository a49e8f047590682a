// How a managed runtime takes part in a walk. The walker knows nothing of
// .NET: a runtime answers four questions per thread (does this code belong to
// you; unwind it; name it; which of your transition records sit here), so
// that a second runtime can be added beside .NET without touching the walk.
#pragma once

#include "stackwalk/walk/Report.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

// The runtime's view of one thread, for the length of its walk.
class ManagedThreadWalk {
public:
  virtual ~ManagedThreadWalk() = default;

  // Unwinds the runtime's own code; the walk asks it before native unwind info.
  virtual Unwinder *codeUnwinder() = 0;
  // The runtime's stub a suspended thread's hijacked return went to, whose
  // unwind info misdescribes it; asked before native unwind info. May be null.
  virtual Unwinder *hijackUnwinder() = 0;
  // Carries the walk through the runtime's transition records where native
  // unwinding cannot go on; asked after native unwind info. May be null.
  virtual Unwinder *transitionUnwinder() = 0;

  // The entries of the runtime's transition records (capital-F Frames) that
  // live in the stack frame of `frame`, below `callerSp` (its caller's stack
  // pointer; none for the outermost frame), in stack order.
  virtual std::vector<ReportFrame> transitionFramesBelow(std::optional<uint64_t> callerSp, const Frame &frame) = 0;

  // The frame's entry when its code is the runtime's to name (managed code),
  // else nullopt: the one place a physical frame is classified as managed.
  // `before` is the entries of the thread so far.
  virtual std::optional<ReportFrame> managedFrame(const Frame &frame, const std::vector<ReportFrame> &before) = 0;
};

// What --runtime-info shows of a runtime: its summary, how its description of
// itself was read, and its own list of threads.
struct RuntimeDetails {
  struct Thread {
    uint64_t osId = 0;       // the OS thread id
    uint32_t managedId = 0;  // the runtime's own id
    uint64_t address = 0;    // the runtime's record of the thread
    uint64_t firstFrame = 0; // its first transition record
  };
  RuntimeSummary summary;
  unsigned descriptorVersion = 0;
  std::string baseline;
  unsigned pointerSize = 0;
  unsigned subDescriptors = 0;
  size_t types = 0;
  std::vector<Thread> threads;
  std::string threadsProblem; // why the list ends early, if it does
};

class ManagedRuntime {
public:
  virtual ~ManagedRuntime() = default;
  virtual RuntimeSummary summary() const = 0;
  virtual RuntimeDetails details() const = 0;
  // Starts a thread's walk: sets what the runtime knows of the thread (its
  // managed id, last thrown exception, notes) in `thread`, and notes there
  // what it cannot read during the walk, which must not outlive `thread`.
  // `runtimeWalkOnly` asks for the runtime's own walk (--managed-only):
  // managed frames take the registers the runtime's records give them.
  virtual std::unique_ptr<ManagedThreadWalk> beginThread(ReportThread &thread, bool runtimeWalkOnly) = 0;
};

// The process's managed runtime, if it has one stackwalk can read, else why
// not (`unreadable`); a process whose runtime module is there but cannot be
// read gets a warning saying why.
std::unique_ptr<ManagedRuntime> openManagedRuntime(const Target &target, std::vector<std::string> &warnings,
                                                   std::string &unreadable);

} // namespace stackwalk
