#include "DotnetLayer.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/frames/ManagedUnwinders.h"

namespace stackwalk {
namespace {

// One thread's runtime state for its walk: its Frame chain, used from the
// innermost Frame outwards.
class DotnetThreadWalk : public ManagedThreadWalk {
public:
  DotnetThreadWalk(frames::DotnetRuntime &runtime, ReportThread &thread, bool runtimeWalkOnly);

  Unwinder *codeUnwinder() override { return &code_; }
  Unwinder *hijackUnwinder() override { return hijackUnwinder_.get(); }
  Unwinder *transitionUnwinder() override { return frameUnwinder_.get(); }
  std::vector<ReportFrame> transitionFramesBelow(std::optional<uint64_t> callerSp, const Frame &frame) override;
  std::optional<ReportFrame> managedFrame(const Frame &frame, const std::vector<ReportFrame> &before) override;

private:
  ReportFrame runtimeFrameEntry(const frames::RuntimeFrame &frame, const Frame &at);
  bool resumesIn(const RegisterFile &registers, const frames::CodeBlock &block);

  frames::DotnetRuntime &runtime_;
  std::string &note_; // the thread's managedNote: what could not be read
  bool codeMapProblemNoted_ = false;
  bool runtimeWalkOnly_;
  frames::ManagedCodeUnwinder code_;
  std::vector<frames::RuntimeFrame> chain_;
  std::unique_ptr<frames::RuntimeFrameUnwinder> frameUnwinder_;
  std::unique_ptr<frames::HijackUnwinder> hijackUnwinder_;
  size_t nextFrame_ = 0;
};

DotnetThreadWalk::DotnetThreadWalk(frames::DotnetRuntime &runtime, ReportThread &thread, bool runtimeWalkOnly)
    : runtime_(runtime), note_(thread.managedNote), runtimeWalkOnly_(runtimeWalkOnly), code_(runtime) {
  const frames::RuntimeThreadList &list = runtime.threads();
  if (!list.problem.empty()) thread.managedNote = "the runtime's thread list: " + list.problem;
  const frames::RuntimeThread *managed = runtime.threadByOsId(thread.tid);
  if (!managed) return;
  thread.managedThreadId = managed->managedId;
  frames::FrameChain chain = frames::readFrameChain(runtime.data(), managed->firstFrame);
  if (!chain.problem.empty()) thread.managedNote = "the Frame chain: " + chain.problem;
  frames::ManagedExceptionChain thrown = frames::lastThrownException(runtime.data(), runtime.names(), managed->address);
  thread.lastThrown = std::move(thrown.exceptions);
  if (!thrown.problem.empty())
    thread.managedNote += (thread.managedNote.empty() ? "" : "; ") + std::string("the last thrown exception: ") + thrown.problem;
  chain_ = std::move(chain.frames);
  frameUnwinder_ = std::make_unique<frames::RuntimeFrameUnwinder>(runtime, chain_);
  hijackUnwinder_ = std::make_unique<frames::HijackUnwinder>(runtime, chain_);
}

ReportFrame DotnetThreadWalk::runtimeFrameEntry(const frames::RuntimeFrame &runtimeFrame, const Frame &at) {
  ReportFrame entry;
  entry.kind = FrameKind::Runtime;
  entry.trust = FrameTrust::RuntimeFrame;
  entry.sp = runtimeFrame.address;
  entry.frameAddress = runtimeFrame.address;
  entry.frameName = runtimeFrame.name.empty() ? "Frame " + hex(runtimeFrame.identifier) : runtimeFrame.name;
  auto context = frames::contextFromFrame(runtime_.data(), runtimeFrame, at.regs, runtime_.data().target().os());
  if (context && *context) {
    entry.registers = std::move(**context);
    entry.ip = entry.registers->pc().value_or(0);
  } else if (!context) {
    entry.note = llvm::toString(context.takeError());
  }
  if (uint64_t md = frames::frameMethodDesc(runtime_.data(), runtimeFrame)) {
    entry.methodDesc = md;
    auto method = runtime_.names().describe(md);
    if (method) entry.function = method->name;
    else entry.note = llvm::toString(method.takeError());
  }
  return entry;
}

std::vector<ReportFrame> DotnetThreadWalk::transitionFramesBelow(std::optional<uint64_t> callerSp, const Frame &frame) {
  // A Frame lives in the stack frame of the function that pushed it; the
  // runtime's walk reports it just before that function.
  std::vector<ReportFrame> entries;
  while (nextFrame_ < chain_.size() && (!callerSp || chain_[nextFrame_].address < *callerSp)) {
    // Where the chain goes down in memory (past a FaultingExceptionFrame that a
    // stack overflow's handler built on its alternate signal stack), the Frames
    // after it lie on the thread's own stack: due once the walk is there.
    uint64_t address = chain_[nextFrame_].address;
    if (callerSp && nextFrame_ > 0 && chain_[nextFrame_ - 1].address > address && address < frame.sp) break;
    entries.push_back(runtimeFrameEntry(chain_[nextFrame_++], frame));
  }
  return entries;
}

// The runtime's own walk never unwinds native code: coming back from it, it
// resumes at the registers the Frame recorded (StackWalk.md, step 3.1). An
// inlined P/Invoke's Frame holds the return address of the helper that set it
// up, a few instructions before the native call's own, and the stack pointer
// of its call site, which in an IL stub lies above the space the stub
// allocates afterwards to marshal its arguments.
const RegisterFile *transitionContext(const std::vector<ReportFrame> &before) {
  if (before.size() < 2) return nullptr;
  const ReportFrame &transition = before.back(), &native = before[before.size() - 2];
  if (transition.kind != FrameKind::Runtime || native.kind != FrameKind::Native || !transition.registers)
    return nullptr;
  return &*transition.registers;
}

// The Frame's registers resume the walk in this frame's method, not in another.
bool DotnetThreadWalk::resumesIn(const RegisterFile &registers, const frames::CodeBlock &block) {
  if (!registers.pc() || !registers.sp()) return false;
  auto resumed = runtime_.code().find(*registers.pc());
  if (!resumed) return llvm::consumeError(resumed.takeError()), false;
  return *resumed && (*resumed)->start == block.start;
}

std::optional<ReportFrame> DotnetThreadWalk::managedFrame(const Frame &frame, const std::vector<ReportFrame> &before) {
  auto block = runtime_.code().find(frame.lookupAddress());
  if (!block) {
    // The frame stays native; the first such failure of a thread is noted.
    std::string why = llvm::toString(block.takeError());
    if (!codeMapProblemNoted_)
      note_ += (note_.empty() ? "" : "; ") + ("the code map at " + hex(frame.lookupAddress()) + ": " + why);
    codeMapProblemNoted_ = true;
    return std::nullopt;
  }
  if (!*block || (*block)->kind == frames::CodeBlock::Kind::Stub) return std::nullopt;
  ReportFrame entry;
  entry.kind = FrameKind::Managed;
  entry.trust = frame.trust;
  entry.ip = frame.ip;
  entry.sp = frame.sp;
  entry.module = frame.module;
  entry.registers = frame.regs;
  if (const RegisterFile *resume = runtimeWalkOnly_ ? transitionContext(before) : nullptr)
    if (resumesIn(*resume, **block)) entry.ip = *resume->pc(), entry.sp = *resume->sp();
  if (entry.ip >= (*block)->start) entry.functionOffset = entry.ip - (*block)->start;
  if (uint64_t md = (*block)->methodDesc) {
    entry.methodDesc = md;
    auto method = runtime_.names().describe(md);
    if (method) {
      entry.function = method->name;
      entry.moduleName = method->moduleName;
    } else {
      entry.note = llvm::toString(method.takeError());
    }
  } else {
    entry.note = "the runtime records no MethodDesc for this code";
  }
  return entry;
}

} // namespace

RuntimeSummary DotnetLayer::summary() const {
  const frames::ContractDescriptor &descriptor = runtime_->descriptor();
  RuntimeSummary summary;
  summary.kind = "coreclr";
  summary.displayName = ".NET";
  summary.version = runtime_->version();
  summary.module = descriptor.origin().module;
  summary.descriptorAddress = descriptor.origin().address;
  summary.descriptorSource = descriptor.origin().source;
  summary.contracts = descriptor.contracts();
  return summary;
}

RuntimeDetails DotnetLayer::details() const {
  const frames::ContractDescriptor &descriptor = runtime_->descriptor();
  RuntimeDetails details;
  details.summary = summary();
  details.descriptorVersion = descriptor.version();
  details.baseline = descriptor.baseline();
  details.pointerSize = descriptor.pointerSize();
  details.subDescriptors = descriptor.origin().subDescriptors;
  details.types = descriptor.types().size();
  const frames::RuntimeThreadList &threads = runtime_->threads();
  for (const frames::RuntimeThread &thread : threads.threads)
    details.threads.push_back({thread.osId, thread.managedId, thread.address, thread.firstFrame});
  details.threadsProblem = threads.problem;
  return details;
}

std::unique_ptr<ManagedThreadWalk> DotnetLayer::beginThread(ReportThread &thread, bool runtimeWalkOnly) {
  return std::make_unique<DotnetThreadWalk>(*runtime_, thread, runtimeWalkOnly);
}

std::unique_ptr<ManagedRuntime> openManagedRuntime(const Target &target, std::vector<std::string> &warnings,
                                                   std::string &unreadable) {
  auto runtime = frames::DotnetRuntime::open(target);
  if (runtime) return std::make_unique<DotnetLayer>(std::move(*runtime));
  unreadable = llvm::toString(runtime.takeError());
  bool hasRuntimeModule = std::any_of(target.modules.begin(), target.modules.end(), frames::isRuntimeModule);
  if (hasRuntimeModule) warnings.push_back("the .NET runtime's managed frames are unavailable: " + unreadable);
  return nullptr;
}

} // namespace stackwalk
