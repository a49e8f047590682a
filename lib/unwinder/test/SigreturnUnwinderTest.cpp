// Signal trampolines recognised by their code (arm64, ARM, x86-64, i386; on x86-64, i386
// and ARM without the code, by the frame the kernel wrote), and the
// interrupted registers read from the rt_sigframe at the stack pointer, on a
// synthetic stack laid out as Linux (and qemu-user) lays it out.
#include "SyntheticStack.h"

#include "stackwalk/unwinder/SigreturnUnwinder.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Trampoline = 0x4000, Code = 0x10000, Stack = 0x20000, StackSize = 0x1000;
constexpr uint64_t SigcontextRegs = 128 + 176 + 8; // siginfo, then ucontext's uc_mcontext.regs
constexpr unsigned Sp = 31, Pc = 32;

struct Fixture {
  std::vector<uint8_t> trampoline{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}; // mov x8, #139; svc #0
  std::vector<uint8_t> stack = std::vector<uint8_t>(StackSize, 0);
  OS os = OS::Linux;
  Arch arch = Arch::Arm64;
  std::unique_ptr<Target> built;

  Fixture() {
    // The interrupted registers: x_n = 0x1000 + n, sp, pc.
    for (unsigned reg = 0; reg < 31; ++reg) word(SigcontextRegs + 8 * reg, 0x1000 + reg);
    word(SigcontextRegs + 8 * Sp, Stack + 0x800);
    word(SigcontextRegs + 8 * Pc, Code + 0x40);
  }
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }
  const Target &target() {
    if (!built)
      built = makeTarget(arch, os, makeMemory({{Trampoline, trampoline}, {Stack, stack}}),
                         {{Trampoline, Trampoline + 0x1000, true, false, true}}, {});
    return *built;
  }
  // The frame the handler returned to: the trampoline, as a return address.
  Frame frame() { return makeFrame(target(), Trampoline, Stack, FrameTrust::Cfi, {}, arch); }
};

} // namespace

TEST_CASE("sigreturn: the trampoline's caller is the context the kernel saved, exact", "[sigreturn]") {
  Fixture fx;
  SigreturnUnwinder unwinder;
  CHECK(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  UnwindResult r = unwinder.unwind(fx.frame(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.callerIpIsExact);
  CHECK(r.caller.pc() == Code + 0x40);
  CHECK(r.caller.sp() == Stack + 0x800);
  for (unsigned reg = 0; reg < 31; ++reg) CHECK(r.caller.get(reg) == 0x1000u + reg);
  CHECK(unwinder.trust() == FrameTrust::Context);
}

TEST_CASE("sigreturn: what is not a trampoline, and a frame outside the dump", "[sigreturn]") {
  Fixture fx;
  SigreturnUnwinder unwinder;
  SECTION("other code") {
    fx.trampoline[0] = 0x69; // mov x9, #139
    CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
    CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
  }
  SECTION("another architecture or system") {
    fx.os = GENERATE(OS::Windows, OS::MacOS);
    CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
  }
  SECTION("a signal frame past the end of the stack") {
    fx.stack.resize(SigcontextRegs + 8 * 32); // pc cut off
    CHECK(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
    CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
  }
}

TEST_CASE("sigreturn on ARM: glibc's Thumb-2 rt restorer, the registers after the siginfo", "[sigreturn][arm]") {
  constexpr uint64_t Restorer = 0x4000, ArmStack = 0x20000;
  std::vector<uint8_t> restorer{0x4f, 0xf0, 0xad, 0x07, 0x00, 0xdf}; // mov.w r7, #173; svc #0
  std::vector<uint8_t> stack(0x400, 0);
  // rt_sigframe: siginfo (128), uc_flags, uc_link, uc_stack (20), trap_no, error_code, oldmask, r0-r15, cpsr.
  for (unsigned reg = 0; reg < 17; ++reg) {
    uint32_t value = reg == 13 ? uint32_t(ArmStack + 0x300) : reg == 15 ? 0x10040 : reg == 16 ? 0x30 : 0x1000 + reg;
    std::memcpy(&stack[128 + 32 + 4 * reg], &value, 4);
  }
  auto target = makeTarget(Arch::Arm, OS::Linux, makeMemory({{Restorer, restorer}, {ArmStack, stack}}), {}, {});
  Frame frame = makeFrame(*target, Restorer, ArmStack, FrameTrust::Cfi, {}, Arch::Arm);
  SigreturnUnwinder unwinder;
  CHECK(unwinder.isSignalTrampoline(frame, *target));
  UnwindResult r = unwinder.unwind(frame, *target);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.callerIpIsExact);
  CHECK(r.caller.pc() == 0x10040u);
  CHECK(r.caller.sp() == ArmStack + 0x300);
  CHECK(r.caller.get(7) == 0x1007u);
  CHECK(isThumb(r.caller)); // cpsr's T bit (0x20)
}

namespace {

// A signal frame on a synthetic stack at 0x20000, after the handler's return
// into the restorer at 0x4000 (its code in the dump or not); the interrupted
// code is at 0x10040 in a mapped code page.
struct SignalFrameFixture {
  static constexpr uint64_t Restorer = 0x4000, Code = 0x10000, Stack = 0x20000;
  SignalFrameFixture(Arch arch, std::vector<uint8_t> restorer, bool codeInDump)
      : arch(arch), restorer(std::move(restorer)), codeInDump(codeInDump) {}

  const Target &target() {
    if (!built) {
      std::vector<std::pair<uint64_t, std::vector<uint8_t>>> memory = {{Stack, stack}};
      if (codeInDump) memory.push_back({Restorer, restorer});
      built = makeTarget(arch, OS::Linux, makeMemory(std::move(memory)),
                         {{Restorer, Restorer + 0x1000, true, false, true}, {Code, Code + 0x1000, true, false, true},
                          {Stack, Stack + 0x1000, true, true, false}},
                         {});
    }
    return *built;
  }
  Frame frame(FrameTrust trust = FrameTrust::Cfi) { return makeFrame(target(), Restorer, Stack, trust, {}, arch); }

  Arch arch;
  std::vector<uint8_t> restorer;
  bool codeInDump;
  std::vector<uint8_t> stack = std::vector<uint8_t>(0x1000, 0);
  std::unique_ptr<Target> built;
};

// An ARM signal frame as Linux and qemu-arm write it, at the stack pointer the
// handler returned with: an rt_sigframe (siginfo, then the ucontext) or a
// sigframe (the ucontext first); the ucontext's uc_flags, uc_link, uc_stack
// (20 bytes), sigcontext (trap_no, error_code, oldmask, r0-r15, cpsr,
// fault_address), sigset (128 bytes), then the regspace's VFP record. The
// restorer's code (glibc's) is not in the dump unless a test puts it there.
struct ArmFrame : SignalFrameFixture {
  ArmFrame() : SignalFrameFixture(Arch::Arm, {0x4f, 0xf0, 0xad, 0x07, 0x00, 0xdf}, false) {} // mov.w r7, #173; svc #0
  uint64_t ucontext = 128; // where the ucontext begins: after the siginfo of an rt_sigframe

  void write(uint64_t offset, uint32_t value) { std::memcpy(&stack[offset], &value, 4); }
  void lay() {
    write(0, 10); // si_signo: SIGUSR1 (a sigframe's uc_flags there: 0)
    for (unsigned reg = 0; reg < 17; ++reg)
      write(ucontext + 32 + 4 * reg, reg == 13 ? uint32_t(Stack + 0x700) : reg == 15 ? uint32_t(Code + 0x40)
                                                : reg == 16                    ? 0x600c0030 // user mode, Thumb
                                                                               : 0x1000 + reg);
    write(ucontext + 232, 0x56465001); // VFP_MAGIC
  }
};

} // namespace

TEST_CASE("sigreturn on ARM without the restorer's code: the frame the kernel wrote, by its data", "[sigreturn][arm]") {
  ArmFrame fx;
  fx.ucontext = GENERATE(128u, 0u); // rt_sigframe, sigframe
  CAPTURE(fx.ucontext);
  fx.lay();
  SigreturnUnwinder unwinder;
  CHECK(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  UnwindResult r = unwinder.unwind(fx.frame(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.callerIpIsExact);
  CHECK(r.caller.pc() == ArmFrame::Code + 0x40);
  CHECK(r.caller.sp() == ArmFrame::Stack + 0x700);
  CHECK(r.caller.get(7) == 0x1007u);
  CHECK(isThumb(r.caller));
}

TEST_CASE("sigreturn on ARM: what is not a signal frame", "[sigreturn][arm]") {
  ArmFrame fx;
  fx.lay();
  SigreturnUnwinder unwinder;
  SECTION("the thread's own context: no handler returned there") {
    CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(FrameTrust::Context), fx.target()));
    return;
  }
  SECTION("other code in the dump, even above a signal frame") {
    fx.codeInDump = true;
    fx.restorer[2] = 0xae; // mov.w r7, #174
  }
  SECTION("without the code, a stack that is no signal frame") {
    auto [offset, value] = GENERATE(std::pair(128u + 4, uint32_t(0x20000)), // uc_link
                                    std::pair(128u + 32 + 64, uint32_t(0x600c0013)), // cpsr: supervisor mode
                                    std::pair(128u + 32 + 60, uint32_t(0x50000)),    // pc in no code
                                    std::pair(128u + 232, uint32_t(0)));              // no VFP record
    CAPTURE(offset);
    fx.write(offset, value);
  }
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
}

namespace {

// An x86-64 rt_sigframe as Linux writes it below an interrupted thread's stack,
// after the handler's return: the ucontext at sp (uc_flags UC_FP_XSTATE |
// UC_SIGCONTEXT_SS, uc_link null), its sigcontext at sp + 40 (r8-r15, rdi,
// rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags, the segment word, err,
// trapno, oldmask, cr2, fpstate), the fpstate above it. The restorer's code
// is in the dump unless a test leaves it out.
struct X86_64Frame : SignalFrameFixture {
  X86_64Frame()
      : SignalFrameFixture(Arch::X86_64, {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}, true) { // mov $15, %rax; syscall
    word(0, 3);
    for (unsigned i = 0; i < 15; ++i) word(40 + 8 * i, 0x1000 + i); // r8 ... rcx
    word(40 + 8 * 15, Stack + 0x900);                              // rsp
    word(40 + 8 * 16, Code + 0x40);                                // rip
    word(40 + 8 * 18, 0x002b000000000033);                         // cs 0x33, gs, fs 0, ss 0x2b
    word(40 + 8 * 23, Stack + 0x400);                              // fpstate
  }
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }
};

} // namespace

TEST_CASE("sigreturn on x86-64: glibc's restorer, or without its code the rt_sigframe the kernel wrote",
          "[sigreturn][x86_64]") {
  X86_64Frame fx;
  fx.codeInDump = GENERATE(true, false);
  CAPTURE(fx.codeInDump);
  SigreturnUnwinder unwinder;
  CHECK(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  UnwindResult r = unwinder.unwind(fx.frame(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.callerIpIsExact);
  CHECK(r.caller.pc() == X86_64Frame::Code + 0x40);
  CHECK(r.caller.sp() == X86_64Frame::Stack + 0x900);
  CHECK(r.caller.get(Rbp) == 0x100a);
  CHECK(r.caller.get(Rax) == 0x100d);
  CHECK(r.caller.get(R15) == 0x1007);
}

TEST_CASE("sigreturn on x86-64: what is not a signal frame", "[sigreturn][x86_64]") {
  X86_64Frame fx;
  SigreturnUnwinder unwinder;
  SECTION("other code, even above a signal frame") { fx.restorer[3] = 0x0e; }
  SECTION("the thread's own context: no handler returned there") {
    fx.codeInDump = false;
    CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(FrameTrust::Context), fx.target()));
    return;
  }
  SECTION("without the code, a stack that is no rt_sigframe") {
    fx.codeInDump = false;
    auto [offset, value] = GENERATE(std::pair(0u, uint64_t(8)),                          // uc_flags
                                    std::pair(8u, uint64_t(0x20000)),                     // uc_link
                                    std::pair(40u + 8 * 18, uint64_t(0x002b000000000023)), // a 32-bit cs
                                    std::pair(40u + 8 * 18, uint64_t(0x0063000000000033)), // another ss
                                    std::pair(40u + 8 * 16, uint64_t(0x50000)),           // rip in no code
                                    std::pair(40u + 8 * 23, uint64_t(0x20000)));          // fpstate below the frame
    CAPTURE(offset);
    fx.word(offset, value);
  }
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
}

namespace {

// An i386 signal frame after the handler's return (its pretcode popped): an
// rt_sigframe (sig, pinfo, puc, the siginfo, the ucontext: uc_flags, uc_link,
// uc_stack, then the sigcontext) or a sigframe (sig, then the sigcontext).
// The sigcontext: gs, fs, es, ds, edi, esi, ebp, esp, ebx, edx, ecx, eax,
// trapno, err, eip, cs, eflags. The restorer's code is glibc's rt one, in the
// dump unless a test leaves it out.
struct X86Frame : SignalFrameFixture {
  static constexpr unsigned Eax = 0, Ecx = 1, Ebx = 3, Ebp = 5, Edi = 7, Eflags = 9;
  X86Frame() : SignalFrameFixture(Arch::X86, {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80}, true) { // mov $173, %eax; int $0x80
    write(0, 10);                                // SIGUSR1
    write(4, uint32_t(Stack + 12));              // pinfo
    write(8, uint32_t(Stack + 140));             // puc
    lay(160);
  }
  // The sigcontext at `at`: edi ... eax are 0x1004 ... 0x100b, but esp.
  void lay(uint64_t at) {
    for (unsigned word = 4; word < 12; ++word) write(at + 4 * word, 0x1000 + word);
    write(at + 4 * 7, uint32_t(Stack + 0x900)); // esp
    write(at + 4 * 14, uint32_t(Code + 0x40));  // eip
    write(at + 4 * 15, 0x23);                   // cs
    write(at + 4 * 16, 0x246);                  // eflags
  }
  void write(uint64_t offset, uint32_t value) { std::memcpy(&stack[offset], &value, 4); }
};

} // namespace

TEST_CASE("sigreturn on i386: glibc's restorers, or without their code the rt_sigframe the kernel wrote",
          "[sigreturn][x86]") {
  X86Frame fx;
  SECTION("the rt restorer") {}
  SECTION("the rt_sigframe by its data") { fx.codeInDump = false; }
  SECTION("the restorer of a handler without SA_SIGINFO: the sigcontext after sig") {
    fx.restorer = {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80}; // pop %eax; mov $119, %eax; int $0x80
    fx.stack.assign(fx.stack.size(), 0);
    fx.write(0, 10);
    fx.lay(4);
  }
  SigreturnUnwinder unwinder;
  CHECK(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  UnwindResult r = unwinder.unwind(fx.frame(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.callerIpIsExact);
  CHECK(r.caller.pc() == X86Frame::Code + 0x40);
  CHECK(r.caller.sp() == X86Frame::Stack + 0x900);
  CHECK(r.caller.get(X86Frame::Edi) == 0x1004u);
  CHECK(r.caller.get(X86Frame::Ebp) == 0x1006u);
  CHECK(r.caller.get(X86Frame::Ebx) == 0x1008u);
  CHECK(r.caller.get(X86Frame::Ecx) == 0x100au);
  CHECK(r.caller.get(X86Frame::Eax) == 0x100bu);
  CHECK(r.caller.get(X86Frame::Eflags) == 0x246u);
  CHECK_FALSE(r.caller.isKnown(41)); // cs: not carried
}

TEST_CASE("sigreturn on i386: what is not a signal frame", "[sigreturn][x86]") {
  X86Frame fx;
  SigreturnUnwinder unwinder;
  SECTION("other code, even above a signal frame") { fx.restorer[1] = 0xae; } // mov $174, %eax
  SECTION("the thread's own context: no handler returned there") {
    fx.codeInDump = false;
    CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(FrameTrust::Context), fx.target()));
    return;
  }
  SECTION("without the code, a stack that is no rt_sigframe") {
    fx.codeInDump = false;
    auto [offset, value] = GENERATE(std::pair(0u, uint32_t(0)),                  // no signal
                                    std::pair(4u, uint32_t(0x20010)),            // pinfo elsewhere
                                    std::pair(8u, uint32_t(0x20090)),            // puc elsewhere
                                    std::pair(140u + 4, uint32_t(0x20000)),      // uc_link
                                    std::pair(160u + 4 * 14, uint32_t(0x50000))); // eip in no code
    CAPTURE(offset);
    fx.write(offset, value);
  }
  CHECK_FALSE(unwinder.isSignalTrampoline(fx.frame(), fx.target()));
  CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
}
