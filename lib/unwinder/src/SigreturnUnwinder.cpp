#include "stackwalk/unwinder/SigreturnUnwinder.h"

#include <array>
#include <optional>

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

// 32-bit ARM: mov r7, #173 (__NR_rt_sigreturn) or #119 (__NR_sigreturn);
// svc #0, in ARM, Thumb or Thumb-2 code (glibc's __default_rt_sa_restorer and
// __default_sa_restorer, the kernel's own return code).
constexpr std::array<uint32_t, 2> ArmRtSigreturn = {0xe3a070ad, 0xef000000}, ArmSigreturn = {0xe3a07077, 0xef000000};
constexpr std::array<uint16_t, 2> ThumbRtSigreturn = {0x27ad, 0xdf00}, ThumbSigreturn = {0x2777, 0xdf00};
// Thumb-2's mov.w r7, #imm (glibc's armhf restorers), then svc #0.
constexpr std::array<uint16_t, 3> Thumb2RtSigreturn = {0xf04f, 0x07ad, 0xdf00},
                                  Thumb2Sigreturn = {0xf04f, 0x0777, 0xdf00};

// The ARM sigframe is the ucontext (uc_flags, uc_link, uc_stack: 20 bytes,
// then the sigcontext: trap_no, error_code, oldmask, r0-r15, cpsr); an
// rt_sigframe puts the siginfo (128 bytes) first. arch/arm/kernel/signal.c.
constexpr uint64_t ArmSigcontextRegs = 20 + 12, ArmSiginfo = 128;
constexpr unsigned ArmSavedRegisters = 16 + 1; // r0-r15, cpsr

// Where the interrupted registers are, when the frame's code is a trampoline.
std::optional<uint64_t> savedRegisters(const Frame &frame, const Target &target) {
  if (target.os() != OS::Linux) return std::nullopt;
  if (target.arch() == Arch::Arm64) {
    auto code = target.readValue<std::array<uint32_t, 2>>(frame.ip);
    if (code && *code == Arm64Sigreturn) return frame.sp + Arm64SigcontextRegs;
  } else if (target.arch() == Arch::Arm) {
    if (auto code = target.readValue<std::array<uint32_t, 2>>(frame.ip)) {
      if (*code == ArmRtSigreturn) return frame.sp + ArmSiginfo + ArmSigcontextRegs;
      if (*code == ArmSigreturn) return frame.sp + ArmSigcontextRegs;
    }
    if (auto code = target.readValue<std::array<uint16_t, 2>>(frame.ip)) {
      if (*code == ThumbRtSigreturn) return frame.sp + ArmSiginfo + ArmSigcontextRegs;
      if (*code == ThumbSigreturn) return frame.sp + ArmSigcontextRegs;
    }
    if (auto code = target.readValue<std::array<uint16_t, 3>>(frame.ip)) {
      if (*code == Thumb2RtSigreturn) return frame.sp + ArmSiginfo + ArmSigcontextRegs;
      if (*code == Thumb2Sigreturn) return frame.sp + ArmSigcontextRegs;
    }
  }
  return std::nullopt;
}

} // namespace

bool SigreturnUnwinder::isSignalTrampoline(const Frame &frame, const Target &target) {
  return savedRegisters(frame, target).has_value();
}

UnwindResult SigreturnUnwinder::unwind(const Frame &frame, const Target &target) {
  std::optional<uint64_t> at = savedRegisters(frame, target);
  // Not one: nothing to say about why the walk might end here.
  if (!at) return UnwindResult::noInfo("");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(target.arch());
  result.callerIpIsExact = true;
  if (target.arch() == Arch::Arm64) {
    auto saved = target.readValue<std::array<uint64_t, Arm64SavedRegisters>>(*at);
    if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
    // x0-x30 and sp are DWARF 0-31, pc 32: the sigcontext's own order.
    for (unsigned reg = 0; reg < Arm64SavedRegisters; ++reg) result.caller.set(reg, (*saved)[reg]);
    return result;
  }
  auto saved = target.readValue<std::array<uint32_t, ArmSavedRegisters>>(*at);
  if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
  // r0-r15 are DWARF 0-15; cpsr follows them, as RegisterFile numbers it (16).
  for (unsigned reg = 0; reg < ArmSavedRegisters; ++reg) result.caller.set(reg, (*saved)[reg]);
  return result;
}

} // namespace stackwalk
