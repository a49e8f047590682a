#include "stackwalk/frames/ManagedUnwinders.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/unwinder/Arm64WindowsUnwind.h"

#include <algorithm>
#include <iterator>

namespace stackwalk::frames {
namespace {

// Frames whose saved context is that of an interrupted instruction rather
// than a call's return address.
bool restoresInterruptedContext(const std::string &name) {
  return name == "FaultingExceptionFrame" || name == "ResumableFrame" || name == "RedirectedThreadFrame" ||
         name == "FuncEvalFrame";
}

// Whether the stack pointer `sp` lies in a mapping the dump records that does
// not hold `recordedSp`: the alternate signal stack a stack overflow's handler
// runs on, not the thread's own stack (whose faulting sp may lie in its guard
// page, which the dump leaves out). Unknown without mappings.
bool onAnotherStack(const Target &target, uint64_t recordedSp, uint64_t sp) {
  const MemoryRegion *region = target.regionAt(sp);
  return region && !(recordedSp >= region->start && recordedSp < region->end);
}

} // namespace

UnwindResult ManagedCodeUnwinder::unwind(const Frame &frame, const Target &target) {
  auto block = runtime_.code().find(frame.lookupAddress());
  if (!block) return UnwindResult::noInfo("the runtime's code map: " + llvm::toString(block.takeError()));
  if (!*block) return UnwindResult::noInfo(""); // not managed code: not its kind of frame
  if ((*block)->kind == CodeBlock::Kind::Stub) return UnwindResult::noInfo("a runtime stub without unwind info");
  if (!(*block)->function) return UnwindResult::noInfo("managed code without a RUNTIME_FUNCTION");
  // The JIT describes its code with the Windows unwind data of the machine, on every OS.
  auto result = target.arch() == Arch::Arm64
                    ? unwindArm64Windows(target, (*block)->unwindBase, *(*block)->function, frame, target.os())
                    : unwindWin64(target, (*block)->unwindBase, *(*block)->function, frame, target.os());
  if (!result) return UnwindResult::noInfo("managed unwind info: " + llvm::toString(result.takeError()));
  return std::move(*result);
}

bool ManagedCodeUnwinder::describesCodeAt(uint64_t address, const Target &) {
  auto block = runtime_.code().find(address);
  if (!block) return llvm::consumeError(block.takeError()), false;
  return block->has_value();
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
    return result;
  }
  return UnwindResult::noInfo("no runtime Frame above the stack pointer carries a context");
}

std::optional<RegisterFile> RuntimeFrameUnwinder::recordedInterruption(uint64_t ip, uint64_t sp,
                                                                       const Target &target) {
  for (const RuntimeFrame &runtimeFrame : chain_) {
    if (!restoresInterruptedContext(runtimeFrame.name)) continue;
    auto context = contextFromFrame(runtime_.data(), runtimeFrame, RegisterFile(target.arch()), target.os());
    if (!context) {
      llvm::consumeError(context.takeError());
      continue;
    }
    if (!*context || (*context)->pc() != ip || !(*context)->sp()) continue;
    if (*(*context)->sp() == sp || onAnotherStack(target, *(*context)->sp(), sp)) return std::move(**context);
  }
  return std::nullopt;
}

HijackUnwinder::HijackUnwinder(DotnetRuntime &runtime, const std::vector<RuntimeFrame> &chain) : runtime_(runtime) {
  for (const RuntimeFrame &runtimeFrame : chain)
    if (isHijackFrame(runtimeFrame)) hijacks_.push_back(runtimeFrame);
  std::sort(hijacks_.begin(), hijacks_.end(),
            [](const RuntimeFrame &a, const RuntimeFrame &b) { return a.address < b.address; });
}

UnwindResult HijackUnwinder::unwind(const Frame &frame, const Target &target) {
  // The stub's frame lies above the HijackFrame (the nearest below its sp) and holds its HijackArgs.
  auto above = std::lower_bound(hijacks_.begin(), hijacks_.end(), frame.sp,
                                [](const RuntimeFrame &f, uint64_t sp) { return f.address < sp; });
  if (above == hijacks_.begin()) return UnwindResult::noInfo(""); // not the hijack stub's frame
  const RuntimeFrame &hijack = *std::prev(above);
  auto args = hijackArgsAddress(runtime_.data(), hijack.address);
  if (!args) return UnwindResult::noInfo("HijackFrame at " + hex(hijack.address) + ": " + llvm::toString(args.takeError()));
  if (frame.sp > *args) return UnwindResult::noInfo(""); // a frame above the stub's
  auto context = contextFromFrame(runtime_.data(), hijack, frame.regs, target.os());
  if (!context)
    return UnwindResult::noInfo("HijackFrame at " + hex(hijack.address) + ": " + llvm::toString(context.takeError()));
  if (!*context || !(*context)->pc() || !(*context)->sp() || *(*context)->sp() <= frame.sp) return UnwindResult::noInfo("");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = std::move(**context);
  return result;
}

} // namespace stackwalk::frames
