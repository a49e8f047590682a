// A running Linux process as a Target: the third source beside the two dump
// loaders. Every thread is stopped (ptrace's PTRACE_SEIZE and
// PTRACE_INTERRUPT) while the walk reads it, and resumed as soon as the walk
// has what it needs; memory comes from process_vm_readv, and each page read
// while stopped is kept, so the report is one instant's.
#pragma once

#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <sys/types.h>

namespace stackwalk {

namespace live {
class ThreadStop;
class ProcessMemory;
} // namespace live

class LiveProcess {
public:
  // Stops every thread of process `pid` and reads its threads, registers,
  // mappings and modules. Fails (the process untouched) when there is no
  // such process, it is another's to trace, or a tracer already holds it.
  static llvm::Expected<std::unique_ptr<LiveProcess>> attach(pid_t pid);
  ~LiveProcess(); // resumes the process if resume() was not called

  // The process as a target; its memory reads the stopped process, and
  // after resume() only the pages read before and read-only file mappings.
  std::unique_ptr<Target> takeTarget() { return std::move(target_); }

  // Lets every thread run again (each with any signal it was stopped with)
  // and returns how long the process was stopped. Idempotent.
  std::chrono::microseconds resume();

private:
  LiveProcess() = default;

  std::unique_ptr<live::ThreadStop> stop_;
  std::shared_ptr<live::ProcessMemory> memory_;
  std::unique_ptr<Target> target_;
  std::vector<MemoryRegion> unchanging_; // read-only mappings of files
};

} // namespace stackwalk
