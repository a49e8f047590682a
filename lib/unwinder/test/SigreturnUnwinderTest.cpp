// The arm64 sigreturn trampoline recognised by its two instructions, and the
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
