#include "stackwalk/core/StackWalker.h"

#include <cstdio>

namespace stackwalk {
namespace {
std::string hexAddress(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

// Whether a caller was found where its return address was saved: by unwind
// data, or by a frame-pointer chain (FramePointerUnwinder takes one whose
// return address the dump does not place only when the chain leads back into a
// module). Where the dump does not place that address it may be a JIT's code;
// the caller is taken there, as a walk of a core with its mappings takes it.
// A scan's candidates must lie in modules.
bool locatesReturnAddress(FrameTrust trust) {
  return trust == FrameTrust::Cfi || trust == FrameTrust::UnwindInfo || trust == FrameTrust::Dynamic ||
         trust == FrameTrust::FramePointer;
}
} // namespace

std::string_view trustName(FrameTrust trust) {
  switch (trust) {
  case FrameTrust::Context: return "context";
  case FrameTrust::UnwindInfo: return "unwind_info";
  case FrameTrust::Cfi: return "cfi";
  case FrameTrust::FramePointer: return "frame_pointer";
  case FrameTrust::Scan: return "scan";
  case FrameTrust::RuntimeFrame: return "runtime_frame";
  case FrameTrust::Dynamic: return "dynamic";
  case FrameTrust::Manual: return "manual";
  case FrameTrust::CallSite: return "call_site";
  case FrameTrust::CodeAnalysis: return "code_analysis";
  }
  return "unknown";
}

std::string_view stopReasonName(StopReason reason) {
  switch (reason) {
  case StopReason::None: return "none";
  case StopReason::EndOfStack: return "end_of_stack";
  case StopReason::NullIp: return "null_ip";
  case StopReason::NoContext: return "no_context";
  case StopReason::SpNotIncreasing: return "sp_not_increasing";
  case StopReason::Loop: return "loop";
  case StopReason::IpNotExecutable: return "ip_not_executable";
  case StopReason::NoUnwindInfo: return "no_unwind_info";
  case StopReason::MaxFrames: return "max_frames";
  case StopReason::NoUnwinder: return "no_unwinder";
  }
  return "unknown";
}

StackWalker::StackWalker(const Target &target, const ThreadInfo &thread,
                         std::vector<Unwinder *> unwinders, WalkLimits limits, std::optional<ManualStart> start)
    : target_(target), thread_(thread), unwinders_(std::move(unwinders)), limits_(limits), start_(start) {}

std::optional<Frame> StackWalker::stop(StopReason reason, std::string detail) {
  stopReason_ = reason;
  stopDetail_ = std::move(detail);
  return std::nullopt;
}

Frame frameOf(const Target &target, const RegisterFile &regs, FrameTrust trust, bool ipIsExact) {
  Frame frame;
  frame.regs = regs;
  frame.trust = trust;
  frame.ipIsExact = ipIsExact;
  frame.ip = regs.pc().value_or(0);
  frame.sp = regs.sp().value_or(0);
  frame.module = target.moduleAt(frame.lookupAddress());
  return frame;
}

void takeReturnAddress(const Target &target, RegisterFile &caller) {
  if (std::optional<uint64_t> pc = caller.pc()) {
    noteInstructionSet(caller, *pc);
    caller.setPc(target.codeAddress(*pc));
  }
}

std::optional<Frame> StackWalker::next() {
  if (stopReason_ != StopReason::None) return std::nullopt;
  std::optional<Frame> frame;
  if (!previous_ && start_) {
    RegisterFile regs(target_.arch());
    regs.setPc(start_->ip);
    regs.setSp(start_->sp);
    if (start_->fp) regs.set(regs.fpRegister(), *start_->fp);
    frame = frameOf(target_, regs, FrameTrust::Manual, /*ipIsExact=*/false);
  } else if (!previous_) {
    const RegisterFile &context = thread_.context;
    if (thread_.contextAbsent) return stop(StopReason::NoContext, "the dump records no context for this thread");
    if (!context.pc() || !context.sp())
      return stop(StopReason::NoContext, "the thread's context has no instruction or stack pointer");
    frame = frameOf(target_, context, FrameTrust::Context, /*ipIsExact=*/true);
  } else {
    if (previous_->index + 1 >= limits_.maxFrames)
      return stop(StopReason::MaxFrames, "the frame limit (" + std::to_string(limits_.maxFrames) + ") was reached");
    frame = unwindOnce();
    if (!frame) return std::nullopt;
    frame->index = previous_->index + 1;
    for (Unwinder *unwinder : unwinders_)
      if (unwinder->isSignalTrampoline(*frame, target_)) frame->signalTrampoline = true;
  }
  seen_.insert({frame->ip, frame->sp});
  scanned_ = scanned_ || frame->trust == FrameTrust::Scan;
  previous_ = frame;
  return frame;
}

bool StackWalker::isCode(const Frame &caller) const {
  if (target_.isExecutable(caller.ip)) return true;
  for (Unwinder *unwinder : unwinders_)
    if (unwinder->describesCodeAt(caller.lookupAddress(), target_)) return true;
  return false;
}

std::optional<RegisterFile> StackWalker::recordedInterruption(const RegisterFile &caller) const {
  std::optional<uint64_t> ip = caller.pc(), sp = caller.sp();
  if (!ip || !sp) return std::nullopt;
  for (Unwinder *unwinder : unwinders_)
    if (auto recorded = unwinder->recordedInterruption(*ip, *sp, target_)) return recorded;
  return std::nullopt;
}

std::optional<std::pair<StopReason, std::string>> StackWalker::rejectCaller(const Frame &caller) const {
  const Frame &callee = *previous_;
  if (!caller.regs.pc() || !caller.regs.sp())
    return std::make_pair(StopReason::NoUnwindInfo, "the caller's instruction or stack pointer was not recovered");
  // A signal handler may run on an alternate stack, so only an ordinary call
  // must move the stack pointer up. A leaf function where the return address
  // stays in a link register (arm64), or code whose unwind data reads it from
  // a register (Frame::ipFromRegister), may not move it at all: the caller of
  // an interrupted frame may share its stack pointer.
  bool leafCaller = callee.ipIsExact && (callee.regs.linkRegister() || caller.ipFromRegister) && caller.sp == callee.sp;
  if (!caller.ipIsExact && !leafCaller && !caller.onOtherStack && caller.sp <= callee.sp)
    return std::make_pair(StopReason::SpNotIncreasing, "the caller's stack pointer is not above the callee's");
  // Unwind info describes where the return address is saved, not whether the
  // slot still holds one: a value outside executable memory is no frame.
  if (!isCode(caller) && !(locatesReturnAddress(caller.trust) && target_.mayBeUnplacedCode(caller.ip)))
    return std::make_pair(StopReason::IpNotExecutable, "the return address " + hexAddress(caller.ip) +
                                                           " is not in executable memory");
  if (seen_.count({caller.ip, caller.sp}))
    return std::make_pair(StopReason::Loop, "the same frame would repeat");
  return std::nullopt;
}

std::optional<Frame> StackWalker::unwindOnce() {
  if (unwinders_.empty())
    return stop(StopReason::NoUnwinder, "stackwalk cannot unwind " + std::string(archName(target_.arch())) + " stacks yet");
  const Frame &callee = *previous_;
  std::optional<StopReason> firstFailure;
  std::string tried; // what each unwinder said, in order: the stop's detail
  auto said = [&](const std::string &why) { tried += (tried.empty() ? "" : "; ") + why; };
  for (Unwinder *unwinder : unwinders_) {
    UnwindResult result = unwinder->unwind(callee, target_);
    if (result.status == UnwindResult::Status::EndOfStack)
      return stop(StopReason::EndOfStack, result.detail);
    if (result.status == UnwindResult::Status::CannotContinue)
      return stop(StopReason::NoUnwindInfo, result.detail);
    if (result.status == UnwindResult::Status::NoInfo) {
      if (result.detail.empty()) continue; // not this unwinder's kind of frame
      if (!firstFailure) firstFailure = StopReason::NoUnwindInfo;
      said(result.detail);
      continue;
    }
    if (!result.callerIpIsExact) takeReturnAddress(target_, result.caller);
    bool exact = result.callerIpIsExact;
    if (auto recorded = recordedInterruption(result.caller)) {
      // Reached from an alternate signal stack: the interrupted registers, on the thread's own stack.
      if (recorded->sp() != result.caller.sp()) result.caller = std::move(*recorded);
      exact = true;
    }
    Frame caller = frameOf(target_, result.caller, result.trust.value_or(unwinder->trust()), exact);
    caller.calleeArgumentBytes = result.argumentBytes;
    caller.spIsLowerBound = result.callerSpIsLowerBound;
    caller.onOtherStack = result.callerOnOtherStack;
    caller.ipFromRegister = result.callerIpFromRegister;
    // Unwind info that yields a null return address describes the outermost
    // frame (thread entry points do this); nothing lies beyond it. Not once the
    // walk has taken a frame from the scan: a stale frame's unwind info reads
    // slots that later calls have written since, zeros among them, and the
    // unwinders after it (the scan) look on above.
    if (caller.regs.pc() == 0u) {
      if (!scanned_) return stop(StopReason::NullIp, "the return address is 0");
      if (!firstFailure) firstFailure = StopReason::NoUnwindInfo; // not known to be the outermost frame
      said("the return address by " + std::string(trustName(caller.trust)) + " is 0 above a frame the scan found");
      continue;
    }
    if (auto why = rejectCaller(caller)) {
      if (!firstFailure || *firstFailure == StopReason::NoUnwindInfo) firstFailure = why->first;
      said("the caller by " + std::string(trustName(caller.trust)) + " is refused: " + why->second);
      continue;
    }
    return caller;
  }
  if (!firstFailure) return stop(StopReason::NoUnwindInfo, "no unwinder could find the caller");
  return stop(*firstFailure, tried);
}

} // namespace stackwalk
