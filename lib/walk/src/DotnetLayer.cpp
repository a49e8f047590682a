#include "ManagedFrames.h"

#include "stackwalk/core/Hex.h"

#include <algorithm>

namespace stackwalk {

std::unique_ptr<frames::DotnetRuntime> openRuntime(const Target &target, std::vector<std::string> &warnings) {
  bool hasRuntimeModule = std::any_of(target.modules.begin(), target.modules.end(), [](const Module &m) {
    return llvm::StringRef(m.name).contains_insensitive("coreclr");
  });
  auto runtime = frames::DotnetRuntime::open(target);
  if (runtime) return std::move(*runtime);
  std::string why = llvm::toString(runtime.takeError());
  if (hasRuntimeModule) warnings.push_back("the .NET runtime's managed frames are unavailable: " + why);
  return nullptr;
}

ManagedThread::ManagedThread(frames::DotnetRuntime &runtime, ReportThread &thread)
    : runtime_(runtime), code_(runtime) {
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
}

void ManagedThread::addRuntimeFrame(ReportThread &thread, const frames::RuntimeFrame &runtimeFrame, const Frame &at) {
  ReportFrame entry;
  entry.index = unsigned(thread.frames.size());
  entry.kind = FrameKind::Runtime;
  entry.trust = FrameTrust::RuntimeFrame;
  entry.sp = runtimeFrame.address;
  entry.frameAddress = runtimeFrame.address;
  entry.frameName = runtimeFrame.name.empty() ? "Frame " + hex(runtimeFrame.identifier) : runtimeFrame.name;
  auto context = frames::contextFromFrame(runtime_.data(), runtimeFrame, at.regs, runtime_.data().target().os());
  if (context && *context) {
    thread.frameContexts.push_back(std::move(**context));
    entry.registers = &thread.frameContexts.back();
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
  thread.frames.push_back(std::move(entry));
}

bool ManagedThread::addEntries(ReportThread &thread, const Frame &frame, std::optional<uint64_t> callerSp) {
  // A Frame lives in the stack frame of the function that pushed it; the
  // runtime's walk reports it just before that function.
  while (nextFrame_ < chain_.size() && (!callerSp || chain_[nextFrame_].address < *callerSp))
    addRuntimeFrame(thread, chain_[nextFrame_++], frame);

  auto block = runtime_.code().find(frame.lookupAddress());
  if (!block) {
    llvm::consumeError(block.takeError());
    return false;
  }
  if (!*block || (*block)->kind == frames::CodeBlock::Kind::Stub) return false;
  ReportFrame entry;
  entry.index = unsigned(thread.frames.size());
  entry.kind = FrameKind::Managed;
  entry.trust = frame.trust;
  entry.ip = frame.ip;
  entry.sp = frame.sp;
  entry.module = frame.module;
  entry.registers = &frame.regs;
  if (frame.ip >= (*block)->start) entry.functionOffset = frame.ip - (*block)->start;
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
  thread.frames.push_back(std::move(entry));
  return true;
}

// The runtime's own walk never unwinds native code: coming back from it, it
// takes the managed frame's registers from the Frame (StackWalk.md, step
// 3.1). An inlined P/Invoke's Frame records the return address of the
// helper that set it up, a few instructions before the native call's own.
void keepManagedOnly(ReportThread &thread) {
  std::vector<ReportFrame> &frames = thread.frames;
  for (size_t i = 2; i < frames.size(); ++i) {
    const ReportFrame &frame = frames[i - 1], &before = frames[i - 2];
    if (frames[i].kind != FrameKind::Managed || frame.kind != FrameKind::Runtime || before.kind != FrameKind::Native ||
        !frame.registers)
      continue;
    if (frame.registers->sp() == frames[i].sp && frame.registers->pc()) frames[i].ip = *frame.registers->pc();
  }
  std::erase_if(frames, [](const ReportFrame &f) { return f.kind == FrameKind::Native; });
  for (size_t i = 0; i < frames.size(); ++i) frames[i].index = unsigned(i);
}

} // namespace stackwalk
