// A running Linux process as a Target: the third source beside the two dump
// loaders. What does not change while it runs (its mappings, modules, thread
// names) is read first; then every thread is stopped (ptrace's PTRACE_SEIZE
// and PTRACE_INTERRUPT) while the walk reads its stacks, and resumed as soon
// as the walk has what it needs. Memory comes from process_vm_readv, and each
// page read while stopped is kept, so the report is one instant's.
#pragma once

#include "stackwalk/core/Target.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>

namespace stackwalk {

namespace live {
class ThreadStop;
class ProcessMemory;
} // namespace live

class LiveProcess {
public:
  // Reads process `pid`'s mappings, modules and thread names, the process
  // running on. Fails when there is no such process, the number is a
  // thread's, or a tracer already holds it.
  static llvm::Expected<std::unique_ptr<LiveProcess>> open(pid_t pid);
  ~LiveProcess(); // resumes the process if it is stopped

  // The process as a target, without threads until stop(). Its memory reads
  // the process; once stopped, it forgets what it read before; after
  // resume(), the pages read while stopped, and what AfterResume allows.
  std::unique_ptr<Target> takeTarget() { return std::move(target_); }

  // The perf map the process wrote (/tmp/perf-PID.map, as perf and .NET's
  // DOTNET_PerfMapEnabled name it), when it exists and belongs to the
  // process's user: here, unlike for a dump, the pid is this process's.
  std::optional<std::string> perfMap() const;

  struct Threads {
    std::vector<ThreadInfo> threads; // with their registers and names
    std::vector<std::string> warnings;
  };
  // Stops every thread; with forCore, also reads what saveCore() writes
  // beyond what the walk reads (whole stacks, the dynamic linker's module
  // list, the x87 and SSE registers). Fails (the process running on) when it is
  // another user's to trace, or has no thread left.
  // With fpState, each thread's x87 and SSE registers too (x86-64; --registers).
  llvm::Expected<Threads> stop(bool forCore = false, bool fpState = false);

  // Writes an ELF core of what was read while the process was stopped
  // (--save-core): its threads, those pages, its mappings; gdb and
  // stackwalk read it as a core the kernel wrote. After stop().
  llvm::Error saveCore(const std::string &path) const;

  // Reads each stopped thread's stack whole, in few reads: what changes
  // first once the process runs, for a walk that unwinds after resume().
  void keepStacks();
  // Whether every stopped thread runs on its own stack, the one keepStacks()
  // copies: the main thread in [stack], another in the mapping that holds its
  // thread control block (x86-64's fs_base: glibc keeps it at the top of the
  // stacks it makes). One in a handler on an alternate signal stack unwinds
  // into its own stack too, which is not copied: such a process is unwound
  // while stopped. False on other architectures.
  bool threadsOnTheirOwnStacks() const;
  // What memory reads may still read of the process once it runs again.
  enum class AfterResume {
    // The read-only mappings of files (besides what was read while stopped):
    // the walk read everything else while the process was stopped.
    OnlyFiles,
    // Everything but the threads' stacks, for a walk that unwinds after
    // resume(): keepStacks() copied the stacks and the walk read what the
    // threads change as they run (the runtime's per-thread state); code, the
    // runtime's code maps and method descriptions only grow.
    AllButStacks,
  };
  // Lets every thread run again (each with any signal it was stopped with)
  // and returns how long the process was stopped. Idempotent.
  std::chrono::microseconds resume(AfterResume reads = AfterResume::OnlyFiles);

private:
  LiveProcess() = default;
  void keepForCore();
  std::vector<MemoryRegion> stackRegions() const;

  std::unique_ptr<live::ThreadStop> stop_;
  std::shared_ptr<live::ProcessMemory> memory_;
  std::unique_ptr<Target> target_;
  pid_t pid_ = 0;
  std::string name_, commandLine_;
  std::vector<uint8_t> auxv_;
  std::vector<MemoryRegion> regions_;
  std::optional<MemoryRegion> mainStack_; // [stack]
  std::map<pid_t, std::string> threadNames_; // read before stopping
  std::vector<elfcore::FileMapping> files_;   // what a core's NT_FILE lists
};

} // namespace stackwalk
