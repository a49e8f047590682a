// The walk of one process: from a dump (or a loaded Target) to the report
// model, one thread at a time. Everything between loading and printing
// happens here: module files, code registered at run time, the managed
// runtime, the unwinder policy, the walk, names, arguments.
#pragma once

#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/debuginfo/TailCalls.h"
#include "stackwalk/walk/LoadDump.h"
#include "stackwalk/walk/ManagedRuntime.h"
#include "stackwalk/walk/RegisteredCode.h"
#include "stackwalk/walk/Report.h"
#include "stackwalk/walk/UnwindPolicy.h"
#include "stackwalk/walk/WalkSession.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct WalkOptions {
  std::vector<uint64_t> threadIds; // empty: see allThreads
  bool allThreads = false;         // else, by default, the crashing thread (else the first)
  WalkLimits limits;
  std::optional<ManualStart> start; // for the one selected thread
  size_t maxThreads = 100000;       // threads walked at most; a hostile dump may claim millions
  // Frames of all threads together; the threads past it are not walked. 250,000 frames print as
  // about 140 MB of JSON in 3 s; 2,500 threads of 100 frames fit.
  size_t maxTotalFrames = 250000;
  bool managedOnly = false;         // only managed frames and runtime Frames (StackWalk.md's walk)
  bool arguments = false;           // function arguments from debug info (--args)
  ModuleSearchOptions search;       // where module files are looked for
  std::string perfMap;              // a perf map (--perf-map); none by default
  size_t signatureFrames = 5;       // frames in the crash's signature
  bool trustUncheckedFiles = false; // names from files whose identity the dump does not record, in signatures
};

class ProcessWalk {
public:
  // Prepares the walk of a loaded target: module files resolved, code
  // registered at run time and the managed runtime found, threads selected.
  // Fails when the target has no thread to walk.
  static llvm::Expected<std::unique_ptr<ProcessWalk>> open(std::unique_ptr<Target> target, std::string dumpPath,
                                                           const WalkOptions &options, WalkSession &session);
  // For a running process: the walk prepared before its threads are
  // stopped (module files, registered code, the managed runtime found while
  // it runs on), then given them by adoptThreads().
  static std::unique_ptr<ProcessWalk> openWithoutThreads(std::unique_ptr<Target> target, std::string name,
                                                         const WalkOptions &options, WalkSession &session);
  // The stopped process's threads; fails when there is none, or one asked for is not among them.
  llvm::Error adoptThreads(std::vector<ThreadInfo> threads, const std::vector<std::string> &warnings);
  // The same, loading the dump first.
  static llvm::Expected<std::unique_ptr<ProcessWalk>> open(const std::string &dumpPath, const WalkOptions &options,
                                                           WalkSession &session);

  const Target &target() const { return *target_; }
  // Everything but the threads.
  const Report &report() const { return report_; }
  // The managed runtime in detail (--runtime-info), or why none could be read.
  llvm::Expected<RuntimeDetails> runtimeDetails() const;
  // Walks the next selected thread; nullopt after the last, or once the
  // threads walked hold maxTotalFrames frames (a warning says how many were left).
  std::optional<ReportThread> nextThread();
  // Reads, for every selected thread, what the runtime keeps of it (the
  // runtime's Thread: its Frame chain, its last thrown exception): what a
  // live process changes as soon as it runs. Its stacks are the rest
  // (LiveProcess::keepStacks), so the unwinding can wait until it runs.
  void beginAll();
  // Unwinds every selected thread now (beginAll() first, if not done), doing
  // all that reads the target's memory (the stacks, the runtime's Frames and
  // method names, arguments); nextThread() then only names native frames from
  // module files. A live process is resumed before, or after with --args
  // (which reads values anywhere in memory), so that it waits for no symbol lookup.
  void unwindAll();
  // The report with what is known only at the end: the crash's signature
  // (a walk of the crashing thread of its own when the options changed it).
  const Report &finish();

private:
  // A thread's stack as unwound: every entry but the native frames' names.
  struct UnwoundThread {
    ReportThread thread; // the entries: managed, runtime Frames, and one unnamed per native frame
    // From beginThread() to unwindThread(): refers to `thread` (so the struct stays where it is made).
    std::unique_ptr<ManagedThreadWalk> managed;
    bool unwound = false;
    std::vector<Frame> physical;
    std::vector<std::optional<size_t>> nativeFrame; // per entry: the physical frame it names later
    std::vector<std::vector<std::vector<FunctionArgument>>> arguments; // per physical frame (--args)
  };

  ProcessWalk(std::unique_ptr<Target> target, std::string dumpPath, const WalkOptions &options, WalkSession &session);
  ReportThread walkThread(const ThreadInfo &info, const WalkOptions &options);
  std::unique_ptr<UnwoundThread> beginThread(const ThreadInfo &info, const WalkOptions &options);
  void unwindThread(UnwoundThread &begun, const ThreadInfo &info, const WalkOptions &options);
  ReportThread nameThread(UnwoundThread unwound, const WalkOptions &options);
  void prefetchDebugInfo();
  void unwindAheadOf(size_t index);

  std::unique_ptr<Target> target_;
  WalkOptions options_;
  WalkSession &session_;
  RegisteredCode registered_;
  std::unique_ptr<ManagedRuntime> runtime_;
  std::string runtimeUnreadable_; // why there is no runtime_
  std::unique_ptr<DumpUnwinders> unwinders_;
  TailCallFinder tailCalls_; // needs only references: made with the walk
  Report report_;
  size_t nextThread_ = 0;
  std::vector<std::unique_ptr<UnwoundThread>> unwound_; // by beginAll(), by index in report_.threads
  size_t framesWalked_ = 0; // entries of the threads returned so far, for maxTotalFrames
};

} // namespace stackwalk
