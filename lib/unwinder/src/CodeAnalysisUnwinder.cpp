#include "stackwalk/unwinder/CodeAnalysisUnwinder.h"

#include "CallInstruction.h"
#include "FunctionStart.h"
#include "X86CodeAnalysis.h"
#include "stackwalk/core/Module.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"
#include "stackwalk/unwinder/SigreturnUnwinder.h"

namespace stackwalk {
namespace {

// Code outside every module (a JIT's, which libunwind's registrations or the
// runtime describe) where the dump holds a call before the return address.
bool returnsToUnplacedCode(const Target &target, uint64_t returnAddress) {
  uint64_t code = target.codeAddress(returnAddress);
  return !target.moduleAt(code) && target.isExecutable(code) && callBefore(target, returnAddress) == CallBefore::Yes;
}

// Whether a frame whose CFA is `cfa` returns to an address that follows a
// call, in a module's code or a JIT's, or to a signal trampoline (a
// handler's, whose address the kernel pushed), known by its code.
bool returnsFromCfa(const Frame &frame, const Target &target, uint64_t cfa) {
  unsigned size = pointerSize(target.arch());
  if (cfa < frame.sp + size) return false;
  std::optional<uint64_t> returnAddress = target.readPointer(cfa - size, size);
  if (!returnAddress) return false;
  if (StackScanUnwinder::isPlausibleReturnAddress(target, *returnAddress) ||
      returnsToUnplacedCode(target, *returnAddress))
    return true;
  RegisterFile caller(target.arch());
  caller.setPc(*returnAddress);
  caller.setSp(cfa);
  return SigreturnUnwinder().isSignalTrampoline(frameOf(target, caller, FrameTrust::CodeAnalysis, false), target);
}

// The frame's CFA by its frame pointer, else by its stack pointer: the first
// from which it returns. The frame pointer of a frame the scan found may be a
// guess, or unknown. `anyway`: else the first of them whose return address
// slot the dump holds, whatever it holds.
std::optional<uint64_t> canonicalFrameAddress(const Frame &frame, const Target &target, const X86FrameShape &shape,
                                              bool anyway) {
  std::vector<uint64_t> candidates;
  std::optional<uint64_t> fp = frame.regs.fp();
  if (shape.cfaFromFramePointer && fp) candidates.push_back(*fp + *shape.cfaFromFramePointer);
  if (shape.cfaFromStackPointer) candidates.push_back(frame.sp + *shape.cfaFromStackPointer);
  for (uint64_t cfa : candidates)
    if (returnsFromCfa(frame, target, cfa)) return cfa;
  unsigned size = pointerSize(target.arch());
  for (uint64_t cfa : candidates)
    if (anyway && cfa >= frame.sp + size && target.readPointer(cfa - size, size)) return cfa;
  return std::nullopt;
}

} // namespace

UnwindResult CodeAnalysisUnwinder::unwind(const Frame &frame, const Target &target) {
  if ((target.arch() != Arch::X86_64 && target.arch() != Arch::X86) || target.os() == OS::Windows)
    return UnwindResult::noInfo("");
  // A return address may follow a call that never returns, at the next function's start.
  std::optional<uint64_t> start = functionStart(target, frame.ipIsExact ? frame.ip : frame.ip - 1);
  if (!start) return UnwindResult::noInfo("");
  if (frame.ip - *start > MaxFunctionBytes) return UnwindResult::noInfo("the function's code is too long to analyse");
  std::vector<uint8_t> code(frame.ip - *start);
  if (!target.read(*start, code)) return UnwindResult::noInfo("the function's code is in neither the dump nor a file");
  bool is64 = target.arch() == Arch::X86_64;
  std::optional<X86FrameShape> shape = analyzeX86Frame(code, is64);
  if (!shape) return UnwindResult::noInfo("the function's instructions do not say where its frame is");
  std::optional<uint64_t> cfa = canonicalFrameAddress(frame, target, *shape, !requireReturnAddress_);
  if (!cfa) return UnwindResult::noInfo("the analysed frame's return address follows no call and is no signal trampoline");
  unsigned size = pointerSize(target.arch());
  uint64_t returnAddress = *target.readPointer(*cfa - size, size);
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = frame.regs.calleeSavedOnly(target.os());
  for (const X86FrameShape::SavedRegister &slot : shape->saved) {
    std::optional<uint64_t> value = target.readPointer(*cfa + slot.cfaOffset, size);
    if (value) result.caller.set(slot.dwarfRegister, *value);
    else result.caller.forget(slot.dwarfRegister);
  }
  result.caller.setSp(*cfa);
  result.caller.setPc(returnAddress);
  return result;
}

} // namespace stackwalk
