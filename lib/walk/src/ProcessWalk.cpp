#include "stackwalk/walk/ProcessWalk.h"

#include "stackwalk/elfcore/ExecutableByEntry.h"

#include "DebugInfoBudget.h"
#include "NativeFrames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/ListedIds.h"
#include "StackSlots.h"
#include "stackwalk/debuginfo/FrameArguments.h"
#include "stackwalk/walk/Signature.h"

#include <algorithm>
#include <set>

namespace stackwalk {
namespace {

const ThreadInfo *threadById(const Target &target, uint64_t tid) {
  auto it = std::find_if(target.threads.begin(), target.threads.end(), [&](const ThreadInfo &t) { return t.tid == tid; });
  return it == target.threads.end() ? nullptr : &*it;
}

// Every thread asked for is in the dump (or process); else which are, to pick from.
llvm::Error checkRequestedThreads(const Target &target, const WalkOptions &options, const std::string &where) {
  if (options.allThreads) return llvm::Error::success();
  for (uint64_t tid : options.threadIds) {
    if (threadById(target, tid)) continue;
    std::vector<uint64_t> existing;
    for (const ThreadInfo &thread : target.threads) existing.push_back(thread.tid);
    return failRequest("thread " + std::to_string(tid) + " is not in " + where +
                       " (its threads: " + listedIds(existing, /*named=*/20) + ")");
  }
  return llvm::Error::success();
}

std::vector<const ThreadInfo *> selectThreads(const Target &target, const WalkOptions &options,
                                              std::vector<std::string> &warnings) {
  std::vector<const ThreadInfo *> selected;
  if (options.allThreads) {
    for (const ThreadInfo &thread : target.threads) selected.push_back(&thread);
  } else if (!options.threadIds.empty()) {
    for (uint64_t tid : options.threadIds) selected.push_back(threadById(target, tid));
  } else if (const ThreadInfo *crashed = target.crash ? threadById(target, target.crash->threadId) : nullptr) {
    selected.push_back(crashed);
  } else if (!target.threads.empty()) {
    selected.push_back(&target.threads.front());
  }
  if (selected.size() > options.maxThreads) {
    warnings.push_back("only the first " + std::to_string(options.maxThreads) + " of " +
                       std::to_string(selected.size()) + " threads are walked (--max-threads)");
    selected.resize(options.maxThreads);
  }
  return selected;
}

// The modules the threads' contexts stop in, each once (100,000 threads may
// stop in a few), in the threads' order.
std::vector<const Module *> modulesStoppedIn(const Target &target, const std::vector<const ThreadInfo *> &threads) {
  std::vector<const Module *> modules;
  std::set<const Module *> seen;
  for (const ThreadInfo *thread : threads)
    if (std::optional<uint64_t> pc = thread ? thread->context.pc() : std::nullopt) // null: a live process's, until adoptThreads
      if (const Module *module = target.moduleAt(*pc); module && seen.insert(module).second) modules.push_back(module);
  return modules;
}

// What a walk shows that the signature must not depend on: where it starts,
// how deep it goes, whether native frames are kept. Arguments never matter.
WalkOptions signatureOptions(const WalkOptions &options) {
  WalkOptions neutral = options;
  neutral.start.reset();
  neutral.limits = WalkLimits{};
  neutral.managedOnly = false;
  neutral.arguments = false;
  return neutral;
}

bool walksAsSignatureDoes(const WalkOptions &options) {
  return !options.start && options.limits.maxFrames == WalkLimits{}.maxFrames && !options.managedOnly;
}

} // namespace

llvm::Expected<std::unique_ptr<ProcessWalk>> ProcessWalk::open(std::unique_ptr<Target> target, std::string dumpPath,
                                                               const WalkOptions &options, WalkSession &session) {
  // Without a thread there is no stack to report: the dump is unreadable.
  if (target->threads.empty()) {
    std::string why = "no thread could be read from " + dumpPath;
    for (const std::string &warning : target->warnings) why += "; " + warning;
    return fail(why);
  }
  if (llvm::Error error = checkRequestedThreads(*target, options, "the dump")) return error;
  return std::unique_ptr<ProcessWalk>(new ProcessWalk(std::move(target), std::move(dumpPath), options, session));
}

std::unique_ptr<ProcessWalk> ProcessWalk::openWithoutThreads(std::unique_ptr<Target> target, std::string name,
                                                             const WalkOptions &options, WalkSession &session) {
  return std::unique_ptr<ProcessWalk>(new ProcessWalk(std::move(target), std::move(name), options, session));
}

llvm::Error ProcessWalk::adoptThreads(std::vector<ThreadInfo> threads, const std::vector<std::string> &warnings) {
  if (threads.empty()) return fail("no thread of " + report_.dumpPath + " could be stopped");
  target_->threads = std::move(threads);
  report_.warnings.insert(report_.warnings.end(), warnings.begin(), warnings.end());
  if (llvm::Error error = checkRequestedThreads(*target_, options_, "the process")) return error;
  report_.threads = selectThreads(*target_, options_, report_.warnings);
  prefetchDebugInfo();
  return llvm::Error::success();
}

// Every selected thread's first frame is named, so the debug files of the
// modules their contexts stop in will be read: they start to inflate now,
// while the runtime is read and the first stacks unwound.
void ProcessWalk::prefetchDebugInfo() {
  for (const Module *module : modulesStoppedIn(*target_, report_.threads))
    session_.symbolizer.prefetchDebugInfo(*module);
}

llvm::Expected<std::unique_ptr<ProcessWalk>> ProcessWalk::open(const std::string &dumpPath, const WalkOptions &options,
                                                               WalkSession &session) {
  auto target = loadDump(dumpPath);
  if (!target) return target.takeError();
  return open(std::move(*target), dumpPath, options, session);
}

ProcessWalk::ProcessWalk(std::unique_ptr<Target> target, std::string dumpPath, const WalkOptions &options,
                         WalkSession &session)
    : target_(std::move(target)), options_(options), session_(session),
      tailCalls_(*target_, session.symbolizer, session.tailCalls.get(), &session.tailCallMemo) {
  ModuleSearchOptions search = options.search;
  search.symbolIndexes = session.symbolIndexes.get();
  ModuleResolver resolver(std::move(search), &session.images);
  elfcore::placeModulesByEntryPoint(*target_, resolver);
  // The debug files of the modules the threads stopped in start to inflate
  // as soon as they are found: on a cold walk of a small dump the walk waited
  // for them, and finding the other modules' files takes a few ms.
  std::vector<std::string> selectionWarnings; // given again below
  std::vector<const Module *> stoppedIn = modulesStoppedIn(*target_, selectThreads(*target_, options, selectionWarnings));
  resolver.resolve(*target_, stoppedIn, [&](const Module &module) { session.symbolizer.prefetchDebugInfo(module); });
  target_->inferPointerAuthMask();
  report_.dumpPath = std::move(dumpPath);
  report_.target = target_.get();
  report_.warnings = target_->warnings;
  registered_ = RegisteredCode::find(*target_, options.perfMap, session.images, report_.warnings);
  limitDebugInfo(*target_, session.symbolizer.maxDebugBytes(), report_.warnings);
  for (const Module &module : target_->modules) // stoppedIn's pointers: GDB's JIT modules may have moved them
    if (module.debugInfoRefused) session.symbolizer.cancelPrefetch(module);
  report_.threads = selectThreads(*target_, options, report_.warnings);
  prefetchDebugInfo();
  runtime_ = openManagedRuntime(*target_, report_.warnings, runtimeUnreadable_);
  if (runtime_) report_.runtime = runtime_->summary();
  if (unwindPolicy(target_->arch(), target_->os()).empty())
    report_.warnings.push_back("unwinding " + std::string(archName(target_->arch())) +
                               " stacks is not implemented: each thread shows its context frame only");
  unwinders_ = std::make_unique<DumpUnwinders>(*target_, session.cfi, registered_.dynamicUnwinder());
}

llvm::Expected<RuntimeDetails> ProcessWalk::runtimeDetails() const {
  if (!runtime_) return fail(runtimeUnreadable_);
  return runtime_->details();
}

std::unique_ptr<ProcessWalk::UnwoundThread> ProcessWalk::beginThread(const ThreadInfo &info,
                                                                      const WalkOptions &options) {
  auto out = std::make_unique<UnwoundThread>();
  ReportThread &thread = out->thread;
  thread.tid = info.tid;
  thread.name = info.name;
  thread.crashed = target_->crash && target_->crash->threadId == info.tid;
  thread.fpState = info.fpState;
  if (runtime_) out->managed = runtime_->beginThread(thread, options.managedOnly);
  return out;
}

void ProcessWalk::unwindThread(UnwoundThread &out, const ThreadInfo &info, const WalkOptions &options) {
  ReportThread &thread = out.thread;
  std::unique_ptr<ManagedThreadWalk> managed = std::move(out.managed); // done with at the end
  StackWalker walker(*target_, info, unwinders_->chainFor(managed.get()), options.limits, options.start);
  while (auto frame = walker.next()) out.physical.push_back(std::move(*frame));
  for (const Frame &frame : out.physical)
    if (frame.module) session_.symbolizer.expect(*frame.module, frame.symbolAddress());
  thread.stopReason = walker.stopReason();
  thread.stopDetail = walker.stopDetail();
  const std::vector<Frame> &physical = out.physical;
  if (options.arguments) {
    FrameArguments reader(*target_, session_.symbolizer, physical);
    out.arguments.resize(physical.size());
    // From the outermost frame in: a frame's entry values build on its caller's.
    for (size_t i = physical.size(); i-- > 0;) out.arguments[i] = reader.at(i);
  }
  auto append = [&](ReportFrame entry, std::optional<size_t> native) {
    thread.frames.push_back(std::move(entry));
    out.nativeFrame.push_back(native);
  };
  for (size_t i = 0; i < physical.size(); ++i) {
    if (managed) {
      std::optional<uint64_t> callerSp;
      if (i + 1 < physical.size()) callerSp = physical[i + 1].sp;
      for (ReportFrame &entry : managed->transitionFramesBelow(callerSp, physical[i])) append(std::move(entry), {});
      if (auto entry = managed->managedFrame(physical[i], thread.frames)) {
        append(std::move(*entry), {});
        continue;
      }
    }
    ReportFrame unnamed; // what the runtime layer may look at: a native frame was here
    unnamed.kind = FrameKind::Native;
    unnamed.ip = physical[i].ip;
    unnamed.sp = physical[i].sp;
    append(std::move(unnamed), i);
  }
  out.unwound = true;
}

ReportThread ProcessWalk::nameThread(UnwoundThread unwound, const WalkOptions &options) {
  ReportThread thread = std::move(unwound.thread);
  std::vector<ReportFrame> entries = std::move(thread.frames);
  const std::vector<Frame> &physical = unwound.physical;
  thread.frames.reserve(entries.size()); // at least one entry each; entries carry registers
  for (size_t e = 0; e < entries.size(); ++e) {
    std::optional<size_t> native = unwound.nativeFrame[e];
    if (!native) {
      thread.frames.push_back(std::move(entries[e]));
      continue;
    }
    size_t i = *native;
    appendNativeEntries(thread.frames, physical[i], session_.symbolizer, registered_,
                        unwound.arguments.empty() ? nullptr : &unwound.arguments[i]);
    if (options.arguments && !thread.frames.back().arguments)
      thread.frames.back().stackSlots = stackSlotsAbove(*target_, physical, i);
    if (i + 1 < physical.size())
      appendTailCallEntries(thread.frames, tailCalls_.between(physical, i), physical[i], physical[i + 1].sp,
                            session_.symbolizer);
  }
  // The runtime's own walk (StackWalk.md) reports no native frames.
  if (options.managedOnly)
    std::erase_if(thread.frames, [](const ReportFrame &f) { return f.kind == FrameKind::Native; });
  for (size_t i = 0; i < thread.frames.size(); ++i) thread.frames[i].index = unsigned(i);
  return thread;
}

ReportThread ProcessWalk::walkThread(const ThreadInfo &info, const WalkOptions &options) {
  std::unique_ptr<UnwoundThread> unwound = beginThread(info, options);
  unwindThread(*unwound, info, options);
  return nameThread(std::move(*unwound), options);
}

void ProcessWalk::beginAll() {
  unwound_.resize(report_.threads.size());
  for (size_t i = nextThread_; i < report_.threads.size(); ++i)
    if (!unwound_[i]) unwound_[i] = beginThread(*report_.threads[i], options_);
}

void ProcessWalk::unwindAll() {
  beginAll();
  size_t frames = 0; // physical frames: fewer than the entries nextThread() counts against maxTotalFrames
  for (size_t i = nextThread_; i < report_.threads.size() && frames < options_.maxTotalFrames; ++i) {
    if (!unwound_[i]->unwound) unwindThread(*unwound_[i], *report_.threads[i], options_);
    frames += unwound_[i]->physical.size();
  }
}

// Unwinding reads no debug info (but for --args, FrameArguments), so it is
// what the walk can do while the debug files it will read inflate on other
// threads; a bounded number of threads ahead, to bound the memory they hold.
void ProcessWalk::unwindAheadOf(size_t index) {
  if (options_.arguments) return;
  constexpr size_t MaxUnwoundAhead = 64;
  size_t end = std::min(report_.threads.size(), index + 1 + MaxUnwoundAhead);
  if (index + 1 >= end || !session_.symbolizer.inflating()) return;
  if (unwound_.size() < end) unwound_.resize(report_.threads.size());
  for (size_t i = index + 1; i < end && session_.symbolizer.inflating(); ++i) {
    if (!unwound_[i]) unwound_[i] = beginThread(*report_.threads[i], options_);
    if (!unwound_[i]->unwound) unwindThread(*unwound_[i], *report_.threads[i], options_);
  }
}

std::optional<ReportThread> ProcessWalk::nextThread() {
  if (nextThread_ >= report_.threads.size()) return std::nullopt;
  if (framesWalked_ >= options_.maxTotalFrames) {
    report_.warnings.push_back(std::to_string(report_.threads.size() - nextThread_) + " of " +
                               std::to_string(report_.threads.size()) + " threads not walked: the threads before them " +
                               "hold " + std::to_string(framesWalked_) + " frames (--max-total-frames)");
    nextThread_ = report_.threads.size();
    return std::nullopt;
  }
  size_t index = nextThread_++;
  std::unique_ptr<UnwoundThread> begun = index < unwound_.size() ? std::move(unwound_[index]) : nullptr;
  if (!begun) begun = beginThread(*report_.threads[index], options_);
  if (!begun->unwound) unwindThread(*begun, *report_.threads[index], options_);
  unwindAheadOf(index);
  ReportThread thread = nameThread(std::move(*begun), options_);
  framesWalked_ += thread.frames.size();
  if (thread.crashed && walksAsSignatureDoes(options_))
    report_.signature = threadSignature(thread, options_.signatureFrames, options_.trustUncheckedFiles);
  return thread;
}

const Report &ProcessWalk::finish() {
  if (report_.signature || !target_->crash) return report_;
  if (const ThreadInfo *crashed = threadById(*target_, target_->crash->threadId))
    report_.signature = threadSignature(walkThread(*crashed, signatureOptions(options_)), options_.signatureFrames,
                                        options_.trustUncheckedFiles);
  return report_;
}

} // namespace stackwalk
