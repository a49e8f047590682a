#include "stackwalk/frames/ManagedUnwinders.h"

#include "stackwalk/core/Hex.h"

namespace stackwalk::frames {
namespace {

// Frames whose saved context is that of an interrupted instruction rather
// than a call's return address.
bool restoresInterruptedContext(const std::string &name) {
  return name == "FaultingExceptionFrame" || name == "ResumableFrame" || name == "RedirectedThreadFrame" ||
         name == "FuncEvalFrame";
}

// The caller's ip vouched for as code when the runtime's code map has it
// (StackWalker::rejectCaller would otherwise need the dump's memory regions).
void markManagedCaller(DotnetRuntime &runtime, UnwindResult &result) {
  std::optional<uint64_t> ip = result.caller.pc();
  if (result.status != UnwindResult::Status::Caller || !ip) return;
  // A return address's call lies before it.
  auto block = runtime.code().find(result.callerIpIsExact ? *ip : *ip - 1);
  if (block && *block) result.callerIpIsKnownCode = true;
  else if (!block) llvm::consumeError(block.takeError());
}

} // namespace

UnwindResult ManagedCodeUnwinder::unwind(const Frame &frame, const Target &target) {
  auto block = runtime_.code().find(frame.lookupAddress());
  if (!block) return UnwindResult::noInfo("the runtime's code map: " + llvm::toString(block.takeError()));
  if (!*block) return UnwindResult::noInfo("not managed code");
  if ((*block)->kind == CodeBlock::Kind::Stub) return UnwindResult::noInfo("a runtime stub without unwind info");
  if (!(*block)->function) return UnwindResult::noInfo("managed code without a RUNTIME_FUNCTION");
  auto result = unwindWin64(target, (*block)->unwindBase, *(*block)->function, frame);
  if (!result) return UnwindResult::noInfo("managed unwind info: " + llvm::toString(result.takeError()));
  markManagedCaller(runtime_, *result);
  return std::move(*result);
}

UnwindResult RuntimeFrameUnwinder::unwind(const Frame &frame, const Target &target) {
  for (const RuntimeFrame &runtimeFrame : chain_) {
    if (runtimeFrame.address < frame.sp) continue; // a Frame of code already unwound
    auto context = contextFromFrame(runtime_.data(), runtimeFrame, frame.regs, target.os());
    if (!context) return UnwindResult::noInfo(runtimeFrame.name + " at " + hex(runtimeFrame.address) + ": " +
                                              llvm::toString(context.takeError()));
    if (!*context) continue; // carries no context (or no active call): look further out
    auto sp = (*context)->sp();
    if (!sp || *sp <= frame.sp || !(*context)->pc()) continue;
    UnwindResult result;
    result.status = UnwindResult::Status::Caller;
    result.caller = std::move(**context);
    result.callerIpIsExact = restoresInterruptedContext(runtimeFrame.name);
    markManagedCaller(runtime_, result);
    return result;
  }
  return UnwindResult::noInfo("no runtime Frame above the stack pointer carries a context");
}

} // namespace stackwalk::frames
