#include "stackwalk/unwinder/SigreturnUnwinder.h"

#include <array>
#include <optional>
#include <utility>

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
constexpr unsigned ArmPc = 15, ArmCpsr = 16;
// After the sigcontext (21 words) and the 128-byte sigset, the ucontext's
// regspace begins with the VFP registers' record, tagged VFP_MAGIC, on every
// kernel with VFP (armhf's) and in qemu-arm's frames; XScale's iWMMXt and
// ep93xx's Crunch records, where configured, would come first.
constexpr uint64_t ArmRegspace = 20 + 84 + 128;
constexpr uint32_t ArmVfpMagic = 0x56465001;
constexpr uint32_t ArmModeBits = 0x1f, ArmUserMode = 0x10;

// x86-64: glibc's __restore_rt, mov $15 (__NR_rt_sigreturn), %rax; syscall.
constexpr std::array<uint8_t, 9> X86_64RtSigreturn = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

// The x86-64 rt_sigframe once the handler's return address (pretcode) is
// popped: the ucontext (uc_flags, uc_link, uc_stack: 40 bytes), then the
// sigcontext: r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags,
// cs/gs/fs/ss (one word), err, trapno, oldmask, cr2, fpstate. gdb's
// amd64-linux-tdep.c reads it at sp + 40 too. arch/x86/include/uapi/asm/sigcontext.h.
constexpr uint64_t X86_64Sigcontext = 40;
constexpr unsigned X86_64SigcontextWords = 24;
// Each of the first 17 sigcontext words' DWARF register.
constexpr std::array<unsigned, 17> X86_64SigcontextRegisters = {8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16};
constexpr unsigned X86_64Rip = 16, X86_64Segments = 18, X86_64Fpstate = 23;
constexpr uint64_t X86_64UserCs = 0x33, X86_64UserSs = 0x2b;

// i386: the signal restorers, glibc's and the kernel's vDSO's alike. Debian's
// glibc gives its own no CFI; libgcc and gdb know them by their code too.
// rt: mov $173 (__NR_rt_sigreturn), %eax; int $0x80.
// Without SA_SIGINFO: pop %eax; mov $119 (__NR_sigreturn), %eax; int $0x80.
constexpr std::array<uint8_t, 7> X86RtSigreturn = {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80};
constexpr std::array<uint8_t, 8> X86Sigreturn = {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80};

// The i386 frames once the handler's return address (pretcode) is popped. An
// rt_sigframe: sig, pinfo, puc, the siginfo (128 bytes), then the ucontext
// (uc_flags, uc_link, uc_stack: 20 bytes) and its sigcontext; pinfo and puc
// point at the siginfo and the ucontext in the frame itself. A sigframe: sig,
// then the sigcontext. The sigcontext: gs, fs, es, ds, edi, esi, ebp, esp,
// ebx, edx, ecx, eax, trapno, err, eip, cs, eflags, ... (Linux
// arch/x86/include/uapi/asm/sigcontext.h; libgcc's i386 linux-unwind.h and
// qemu-i386 lay them out alike.)
constexpr uint64_t X86RtSiginfo = 12, X86RtUcontext = X86RtSiginfo + 128, X86RtSigcontext = X86RtUcontext + 20;
constexpr uint64_t X86Sigcontext = 4;
constexpr unsigned X86SigcontextWords = 17; // gs ... eflags
// (sigcontext word, DWARF register) of what is carried: edi ... eax, eip,
// eflags (not the segments, trapno, err or cs).
constexpr std::array<std::pair<unsigned, unsigned>, 10> X86SigcontextRegisters = {
    {{4, 7}, {5, 6}, {6, 5}, {7, 4}, {8, 3}, {9, 2}, {10, 1}, {11, 0}, {14, 8}, {16, 9}}};
constexpr unsigned X86Eip = 14;

// Without the restorer's code, an i386 rt_sigframe is known by its pointers
// into itself, a null uc_link and an interrupted eip in code.
bool isX86SignalFrameData(const Frame &frame, const Target &target) {
  if (frame.trust == FrameTrust::Context) return false; // a handler returned here
  constexpr uint32_t LargestSignal = 64;
  auto head = target.readValue<std::array<uint32_t, 3>>(frame.sp);
  auto link = target.readValue<uint32_t>(frame.sp + X86RtUcontext + 4);
  auto eip = target.readValue<uint32_t>(frame.sp + X86RtSigcontext + 4 * X86Eip);
  return head && link && eip && (*head)[0] >= 1 && (*head)[0] <= LargestSignal &&
         (*head)[1] == frame.sp + X86RtSiginfo && (*head)[2] == frame.sp + X86RtUcontext && *link == 0 &&
         target.isExecutable(*eip);
}

std::optional<uint64_t> x86SavedRegisters(const Frame &frame, const Target &target) {
  auto rt = target.readValue<std::array<uint8_t, X86RtSigreturn.size()>>(frame.ip);
  if (rt && *rt == X86RtSigreturn) return frame.sp + X86RtSigcontext;
  auto plain = target.readValue<std::array<uint8_t, X86Sigreturn.size()>>(frame.ip);
  if (plain && *plain == X86Sigreturn) return frame.sp + X86Sigcontext;
  if (target.readValue<uint8_t>(frame.ip)) return std::nullopt; // other code
  return isX86SignalFrameData(frame, target) ? std::optional(frame.sp + X86RtSigcontext) : std::nullopt;
}

// A handler returned into code no one has (a Linux core leaves a library's
// text out, and its file is not at hand): glibc's restorer cannot be told by
// its instructions, so the kernel's rt_sigframe is recognised by what the
// kernel wrote there. uc_flags holds only UC_FP_XSTATE, UC_SIGCONTEXT_SS and
// UC_STRICT_RESTORE_SS, uc_link is null, the segment word is the user code
// segment with null fs and gs and the user or a null stack segment, the
// interrupted rip is code, and fpstate is null or lies in the frame above it
// (where the kernel puts it). Chance leaves no such 200 bytes on a stack.
bool isX86_64SignalFrameData(const Frame &frame, const Target &target) {
  if (frame.trust == FrameTrust::Context) return false; // a handler returned here
  auto head = target.readValue<std::array<uint64_t, 2>>(frame.sp);
  auto context = target.readValue<std::array<uint64_t, X86_64SigcontextWords>>(frame.sp + X86_64Sigcontext);
  if (!head || !context || (*head)[0] >= 8 || (*head)[1] != 0) return false;
  uint64_t segments = (*context)[X86_64Segments], fpstate = (*context)[X86_64Fpstate];
  uint64_t ss = segments >> 48;
  if ((segments & 0xffffffffffff) != X86_64UserCs || (ss != X86_64UserSs && ss != 0)) return false;
  constexpr uint64_t MaxFpstateDistance = 64 * 1024; // xsave areas are a few KiB
  if (fpstate != 0 && (fpstate <= frame.sp || fpstate - frame.sp > MaxFpstateDistance)) return false;
  return target.isExecutable((*context)[X86_64Rip]);
}

// Whether a ucontext the ARM kernel wrote lies at `at`: a null uc_link, the
// interrupted cpsr in user mode, its pc in code, and the VFP record where the
// regspace begins.
bool isArmUcontext(uint64_t at, const Target &target) {
  auto link = target.readValue<uint32_t>(at + 4);
  auto saved = target.readValue<std::array<uint32_t, ArmSavedRegisters>>(at + ArmSigcontextRegs);
  auto magic = target.readValue<uint32_t>(at + ArmRegspace);
  return link && *link == 0 && saved && ((*saved)[ArmCpsr] & ArmModeBits) == ArmUserMode && magic &&
         *magic == ArmVfpMagic && target.isExecutable((*saved)[ArmPc]);
}

// As on x86-64, a handler that returned into code no one has (qemu-arm's cores
// leave glibc's text out): an rt_sigframe (a siginfo whose signal number is
// one, then the ucontext) or a sigframe (the ucontext at sp), by its data.
std::optional<uint64_t> armSignalFrameData(const Frame &frame, const Target &target) {
  if (frame.trust == FrameTrust::Context) return std::nullopt; // a handler returned here
  constexpr uint32_t LargestSignal = 64;
  auto signal = target.readValue<uint32_t>(frame.sp);
  if (signal && *signal >= 1 && *signal <= LargestSignal && isArmUcontext(frame.sp + ArmSiginfo, target))
    return frame.sp + ArmSiginfo + ArmSigcontextRegs;
  if (isArmUcontext(frame.sp, target)) return frame.sp + ArmSigcontextRegs;
  return std::nullopt;
}

// Where the interrupted registers are, when the frame's code is a trampoline.
std::optional<uint64_t> savedRegisters(const Frame &frame, const Target &target) {
  if (target.os() != OS::Linux) return std::nullopt;
  if (target.arch() == Arch::X86_64) {
    auto code = target.readValue<std::array<uint8_t, 9>>(frame.ip);
    bool trampoline = code ? *code == X86_64RtSigreturn : isX86_64SignalFrameData(frame, target);
    return trampoline ? std::optional(frame.sp + X86_64Sigcontext) : std::nullopt;
  }
  if (target.arch() == Arch::X86) return x86SavedRegisters(frame, target);
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
    if (!target.readValue<uint16_t>(frame.ip)) return armSignalFrameData(frame, target);
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
  if (target.arch() == Arch::X86_64) {
    auto saved = target.readValue<std::array<uint64_t, X86_64SigcontextRegisters.size()>>(*at);
    if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
    for (unsigned i = 0; i < X86_64SigcontextRegisters.size(); ++i)
      result.caller.set(X86_64SigcontextRegisters[i], (*saved)[i]);
    return result;
  }
  if (target.arch() == Arch::X86) {
    auto saved = target.readValue<std::array<uint32_t, X86SigcontextWords>>(*at);
    if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
    for (auto [word, reg] : X86SigcontextRegisters) result.caller.set(reg, (*saved)[word]);
    return result;
  }
  if (target.arch() == Arch::Arm64) {
    auto saved = target.readValue<std::array<uint64_t, Arm64SavedRegisters>>(*at);
    if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
    // x0-x30 and sp are DWARF 0-31, pc 32: the sigcontext's own order.
    for (unsigned reg = 0; reg < Arm64SavedRegisters; ++reg) result.caller.set(reg, (*saved)[reg]);
    return result;
  }
  auto saved = target.readValue<std::array<uint32_t, ArmSavedRegisters>>(*at);
  if (!saved) return UnwindResult::noInfo("the signal frame's registers are not in the dump");
  // r0-r15 are DWARF 0-15; cpsr follows them, as RegisterFile numbers it (ArmCpsr).
  for (unsigned reg = 0; reg < ArmSavedRegisters; ++reg) result.caller.set(reg, (*saved)[reg]);
  return result;
}

} // namespace stackwalk
