// CodeAnalysisUnwinder on synthetic stacks over a small x86-64 shared object
// (yaml2obj) whose functions have symbols but no unwind tables.
#include "SyntheticStack.h"
#include "YamlImage.h"

#include "stackwalk/unwinder/CodeAnalysisUnwinder.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

// .text at 0x1000:
//   caller 0x1000: call f; ret                    (f's return address: 0x1005)
//   f      0x1010: push rbx; sub rsp, 0x10; call g; add rsp, 0x10; pop rbx; ret
//   h      0x1020: push rbp; mov rbp, rsp; sub rsp, rdi; call g; leave; ret
//   k      0x1030: push rbx; call g; pop rbx; ret  (a NOTYPE symbol: no function known to start there)
//   g      0x1040: ret
//   m.cold 0x1048: push rbx; call g; pop rbx; ret  (a cold part: entered by a jump, with its function's frame)
const char *const kText =
    "e80b000000c390909090909090909090534883ec10e8260000004883c4105bc3554889e54829fce814000000c9c3909053e80a0000005bc39090909090909090c39090909090909053e8f2ffffff5bc3";
const char *const kSymbols =
    "  - {Name: caller, Type: STT_FUNC, Section: .text, Value: 0x1000, Size: 6, Binding: STB_GLOBAL}\n"
    "  - {Name: f, Type: STT_FUNC, Section: .text, Value: 0x1010, Size: 0x10, Binding: STB_GLOBAL}\n"
    "  - {Name: h, Type: STT_FUNC, Section: .text, Value: 0x1020, Size: 0xe, Binding: STB_GLOBAL}\n"
    "  - {Name: k, Type: STT_NOTYPE, Section: .text, Value: 0x1030, Size: 8, Binding: STB_GLOBAL}\n"
    "  - {Name: g, Type: STT_FUNC, Section: .text, Value: 0x1040, Size: 1, Binding: STB_GLOBAL}\n"
    "  - {Name: m.cold, Type: STT_FUNC, Section: .text, Value: 0x1048, Size: 8, Binding: STB_LOCAL}\n";

// The module is loaded at Base + 0x1000, its file address 0x1000 (a load bias of Base).
constexpr uint64_t Base = 0x7f0000000000, Stack = 0x7ffd0000, ReturnToCaller = Base + 0x1005;


struct Fixture {
  std::vector<uint8_t> stack = std::vector<uint8_t>(0x100, 0);
  std::unique_ptr<Target> target;
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }
  const Target &build(OS os = OS::Linux, std::vector<std::pair<uint64_t, std::vector<uint8_t>>> memory = {},
                      std::vector<MemoryRegion> regions = {}) {
    memory.emplace_back(Stack, stack);
    target = makeTarget(Arch::X86_64, os, makeMemory(std::move(memory)), std::move(regions),
                        {makeModule("lib.so", Base + 0x1000, 0x1000,
                                    textImage("EM_X86_64", kText, kSymbols, "lib.so"))});
    return *target;
  }
};

} // namespace

TEST_CASE("code analysis: pushes and a stack adjustment lead to the caller, with the registers pushed", "[code-analysis]") {
  Fixture fx;
  fx.word(0x10, 0x7777);         // rbx, pushed by f
  fx.word(0x18, ReturnToCaller); // the call of f
  const Target &target = fx.build();
  // f's call of g returned to 0x101a.
  Frame f = makeFrame(target, Base + 0x101a, Stack, FrameTrust::Cfi, {Rbx, Rbp, R12, Rax});
  UnwindResult r = CodeAnalysisUnwinder().unwind(f, target);
  INFO(r.detail);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnToCaller);
  CHECK(r.caller.sp() == Stack + 0x20);
  CHECK(r.caller.get(Rbx) == 0x7777);
  CHECK(r.caller.get(Rbp) == recognisable(Rbp)); // untouched, callee-saved
  CHECK(r.caller.get(R12) == recognisable(R12));
  CHECK_FALSE(r.caller.isKnown(Rax));
}

TEST_CASE("code analysis: a frame the stack pointer cannot follow, by its frame pointer", "[code-analysis]") {
  Fixture fx;
  fx.word(0x40, 0x7ffd1000);     // the caller's rbp, pushed by h
  fx.word(0x48, ReturnToCaller);
  const Target &target = fx.build();
  Frame h = makeFrame(target, Base + 0x102c, Stack, FrameTrust::Cfi, {});
  h.regs.set(Rbp, Stack + 0x40);
  UnwindResult r = CodeAnalysisUnwinder().unwind(h, target);
  INFO(r.detail);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnToCaller);
  CHECK(r.caller.sp() == Stack + 0x50);
  CHECK(r.caller.get(Rbp) == 0x7ffd1000);
  SECTION("without the frame pointer's value nothing is known") {
    h.regs.forget(Rbp);
    CHECK(CodeAnalysisUnwinder().unwind(h, target).status == Status::NoInfo);
  }
}

TEST_CASE("code analysis: no caller where the analysis is not justified", "[code-analysis]") {
  Fixture fx;
  fx.word(0x18, ReturnToCaller);
  SECTION("a return address that follows no call") {
    fx.word(0x18, Base + 0x1010);
    const Target &target = fx.build();
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x101a, Stack, FrameTrust::Cfi, {}), target).status ==
          Status::NoInfo);
  }
  SECTION("a function's cold part") {
    fx.word(0x08, ReturnToCaller);
    const Target &target = fx.build();
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x104e, Stack, FrameTrust::Cfi, {}), target).status ==
          Status::NoInfo);
  }
  SECTION("code whose symbol is not a function's") {
    fx.word(0x08, ReturnToCaller);
    const Target &target = fx.build();
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x1036, Stack, FrameTrust::Cfi, {}), target).status ==
          Status::NoInfo);
  }
  SECTION("an address inside an instruction, as read from the function's start") {
    const Target &target = fx.build();
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x1013, Stack, FrameTrust::Context, {}), target).status ==
          Status::NoInfo);
  }
  SECTION("a Windows dump") {
    const Target &target = fx.build(OS::Windows);
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x101a, Stack, FrameTrust::Cfi, {}), target).status ==
          Status::NoInfo);
  }
}

TEST_CASE("code analysis: at a function's first instruction the return address is at the stack pointer", "[code-analysis]") {
  Fixture fx;
  fx.word(0, ReturnToCaller);
  const Target &target = fx.build();
  UnwindResult r = CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x1010, Stack, FrameTrust::Context, {}), target);
  INFO(r.detail);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnToCaller);
  CHECK(r.caller.sp() == Stack + 8);
}

TEST_CASE("code analysis: a return into JIT code, outside every module, after a call the dump holds", "[code-analysis]") {
  constexpr uint64_t Jit = 0x7e1000000000;
  Fixture fx;
  fx.word(0x18, Jit + 5);
  std::vector<MemoryRegion> regions = {{Stack, Stack + 0x100, true, true, false},
                                       {Jit, Jit + 0x1000, true, false, true},
                                       {Base + 0x1000, Base + 0x2000, true, false, true}};
  SECTION("a call before it") {
    const Target &target = fx.build(OS::Linux, {{Jit, {0xe8, 0x00, 0x00, 0x00, 0x00, 0xc3}}}, regions);
    UnwindResult r = CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x101a, Stack, FrameTrust::Cfi, {}), target);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == Jit + 5);
  }
  SECTION("no call before it") {
    const Target &target = fx.build(OS::Linux, {{Jit, {0x90, 0x90, 0x90, 0x90, 0x90, 0xc3}}}, regions);
    CHECK(CodeAnalysisUnwinder().unwind(makeFrame(target, Base + 0x101a, Stack, FrameTrust::Cfi, {}), target).status ==
          Status::NoInfo);
  }
}

TEST_CASE("code analysis for the scan: the caller the analysis reads, whatever it holds", "[code-analysis]") {
  Fixture fx;
  fx.word(0x18, 0x1234); // no return address: a stale copy's frame leads to such values
  const Target &target = fx.build();
  Frame f = makeFrame(target, Base + 0x101a, Stack, FrameTrust::Scan, {});
  CHECK(CodeAnalysisUnwinder().unwind(f, target).status == Status::NoInfo);
  UnwindResult r = CodeAnalysisUnwinder(/*requireReturnAddress=*/false).unwind(f, target);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == 0x1234);
  CHECK(r.caller.sp() == Stack + 0x20);
}

TEST_CASE("code analysis for the scan: a stale copy of a return address is refuted by the frame it leads to",
          "[code-analysis]") {
  Fixture fx;
  fx.word(0x00, Base + 0x101a); // f's return from g, left by an earlier call: f's frame would end at 0x28...
  fx.word(0x20, Stack + 0x80);  // ... and return into data: no return address
  fx.word(0x28, ReturnToCaller);
  const Target &target = fx.build();
  // Interrupted in code no symbol names (past m.cold): nothing but the scan.
  Frame interrupted = makeFrame(target, Base + 0x1060, Stack, FrameTrust::Context, {});
  CodeAnalysisUnwinder forScan(/*requireReturnAddress=*/false);
  UnwindResult alone = StackScanUnwinder().unwind(interrupted, target);
  REQUIRE(alone.status == Status::Caller);
  CHECK(alone.caller.pc() == Base + 0x101a);
  UnwindResult checked = StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&forScan}).unwind(interrupted, target);
  REQUIRE(checked.status == Status::Caller);
  CHECK(checked.caller.pc() == ReturnToCaller);
  CHECK(checked.caller.sp() == Stack + 0x30);
}
