#include "stackwalk/unwinder/SigreturnUnwinder.h"

#include <array>

namespace stackwalk {
namespace {

// mov x8, #139 (__NR_rt_sigreturn); svc #0
constexpr std::array<uint32_t, 2> Arm64Sigreturn = {0xd2801168, 0xd4000001};

// The arm64 rt_sigframe at the handler's return: siginfo (128 bytes), then
// the ucontext, whose sigcontext sits at 176 (uc_flags, uc_link, uc_stack,
// a sigset padded to 128 bytes, 16-byte aligned): fault_address, x0-x30, sp,
// pc, pstate. Linux arch/arm64/include/uapi/asm/{sigcontext,ucontext}.h.
constexpr uint64_t Arm64SigcontextRegs = 128 + 176 + 8;
constexpr unsigned Arm64SavedRegisters = 31 + 2; // x0-x30, sp, pc

bool isArm64Sigreturn(const Frame &frame, const Target &target) {
  if (target.arch() != Arch::Arm64 || target.os() != OS::Linux) return false;
  auto code = target.readValue<std::array<uint32_t, 2>>(frame.ip);
  return code && *code == Arm64Sigreturn;
}

} // namespace

bool SigreturnUnwinder::isSignalTrampoline(const Frame &frame, const Target &target) {
  return isArm64Sigreturn(frame, target);
}

UnwindResult SigreturnUnwinder::unwind(const Frame &frame, const Target &target) {
  if (!isArm64Sigreturn(frame, target)) return UnwindResult::noInfo("not a sigreturn trampoline");
  auto saved = target.readValue<std::array<uint64_t, Arm64SavedRegisters>>(frame.sp + Arm64SigcontextRegs);
  if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(Arch::Arm64);
  // x0-x30 and sp are DWARF 0-31, pc 32: the sigcontext's own order.
  for (unsigned reg = 0; reg < Arm64SavedRegisters; ++reg) result.caller.set(reg, (*saved)[reg]);
  result.callerIpIsExact = true;
  return result;
}

} // namespace stackwalk
