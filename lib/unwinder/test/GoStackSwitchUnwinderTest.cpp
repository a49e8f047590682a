// Go's cgo calls on a synthetic pair of stacks laid out as Go 1.19's
// runtime.asmcgocall leaves them: the goroutine's frame that made the call,
// found from what asmcgocall saved on the system stack.
#include "SyntheticStack.h"

#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"
#include "stackwalk/unwinder/GoStackSwitchUnwinder.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

// The address space: the program's code; the thread's system stack (g0);
// the goroutine's stack, below it; the goroutine's g.
constexpr uint64_t Code = 0x400000, SystemStack = 0x7ff000, GoStack = 0x100000, GoStackSize = 0x1000, G = 0x200000;
constexpr uint64_t Page = 0x1000;
// Return addresses of asmcgocall's `call *%rax`: after a switch of stacks, and without one.
constexpr uint64_t AfterSwitchedCall = Code + 0x102, AfterUnswitchedCall = Code + 0x202;
constexpr uint64_t CgocallReturn = Code + 0x305; // in runtime.cgocall, after its call of asmcgocall
constexpr uint64_t FrameSp = SystemStack + 0x100, Depth = 0x148, EntrySp = GoStack + GoStackSize - Depth;

struct Fixture {
  std::vector<uint8_t> code = std::vector<uint8_t>(Page, 0xcc);
  std::vector<uint8_t> systemStack = std::vector<uint8_t>(Page, 0);
  std::vector<uint8_t> goStack = std::vector<uint8_t>(GoStackSize, 0);
  std::vector<uint8_t> g = std::vector<uint8_t>(Page, 0);
  std::unique_ptr<Target> built;

  Fixture() {
    // call *%rax; mov 0x30(%rsp),%rdi; mov 0x8(%rdi),%rsi; sub 0x28(%rsp),%rsi
    put(code, 0x100, {0xff, 0xd0, 0x48, 0x8b, 0x7c, 0x24, 0x30, 0x48, 0x8b, 0x77, 0x08, 0x48, 0x2b, 0x74, 0x24, 0x28});
    // call *%rax; mov 0x28(%rsp),%rsi; mov %rsi,%rsp
    put(code, 0x200, {0xff, 0xd0, 0x48, 0x8b, 0x74, 0x24, 0x28, 0x48, 0x89, 0xf4});
    word(systemStack, FrameSp - SystemStack + 0x30, G);
    word(systemStack, FrameSp - SystemStack + 0x28, Depth);
    word(g, 0, GoStack);                // g.stack.lo
    word(g, 8, GoStack + GoStackSize); // g.stack.hi
    word(goStack, EntrySp - GoStack, CgocallReturn);
  }
  static void put(std::vector<uint8_t> &bytes, size_t at, std::vector<uint8_t> insn) {
    std::copy(insn.begin(), insn.end(), bytes.begin() + at);
  }
  static void word(std::vector<uint8_t> &bytes, size_t at, uint64_t value) { std::memcpy(&bytes[at], &value, 8); }
  const Target &target() {
    if (!built)
      built = makeTarget(Arch::X86_64, OS::Linux,
                         makeMemory({{Code, code}, {SystemStack, systemStack}, {GoStack, goStack}, {G, g}}),
                         {{GoStack, GoStack + GoStackSize, true, true, false},
                          {G, G + Page, true, true, false},
                          {Code, Code + Page, true, false, true},
                          {SystemStack, SystemStack + Page, true, true, false}},
                         {makeModule("go", Code, Page)});
    return *built;
  }
  // asmcgocall's frame, as the C function it called unwinds to it.
  Frame frame(uint64_t returnAddress = AfterSwitchedCall) {
    Frame f = makeFrame(target(), returnAddress, FrameSp, FrameTrust::Cfi, {});
    f.regs.set(f.regs.fpRegister(), GoStack + 0xf00);
    return f;
  }
};

} // namespace

TEST_CASE("Go cgo call: the goroutine's frame, at g.stack.hi minus the depth asmcgocall saved", "[go]") {
  Fixture fx;
  GoStackSwitchUnwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::RuntimeFrame);
  UnwindResult r = unwinder.unwind(fx.frame(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == CgocallReturn);
  CHECK(r.caller.sp() == EntrySp + 8);
  CHECK(r.caller.fp() == GoStack + 0xf00); // C kept rbp for its caller
  CHECK(r.callerOnOtherStack);
  CHECK_FALSE(r.callerIpIsExact);
}

TEST_CASE("Go cgo call made on a system stack already: the stack pointer asmcgocall saved", "[go]") {
  Fixture fx;
  Fixture::word(fx.systemStack, FrameSp - SystemStack + 0x28, SystemStack + 0x400);
  Fixture::word(fx.systemStack, 0x400, CgocallReturn);
  UnwindResult r = GoStackSwitchUnwinder().unwind(fx.frame(AfterUnswitchedCall), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == CgocallReturn);
  CHECK(r.caller.sp() == SystemStack + 0x408);
  CHECK_FALSE(r.callerOnOtherStack);
}

TEST_CASE("Go cgo call: what is not asmcgocall's, and a saved stack that does not hold together", "[go]") {
  Fixture fx;
  GoStackSwitchUnwinder unwinder;
  SECTION("an interrupted frame: its pc is no return address") {
    Frame context = fx.frame();
    context.ipIsExact = true;
    CHECK(unwinder.unwind(context, fx.target()).detail.empty());
  }
  SECTION("other code after the call") {
    fx.code[0x104] = 0x7d; // mov 0x24(%rbp),%rdi: not the restore
    CHECK(unwinder.unwind(fx.frame(), fx.target()).detail.empty());
  }
  SECTION("another call before the return address") {
    fx.code[0x101] = 0xd3; // call *%rbx
    CHECK(unwinder.unwind(fx.frame(), fx.target()).detail.empty());
  }
  SECTION("a depth outside the goroutine's stack, or none") {
    for (uint64_t depth : {uint64_t(0), GoStackSize + 8}) {
      Fixture bad;
      Fixture::word(bad.systemStack, FrameSp - SystemStack + 0x28, depth);
      UnwindResult r = unwinder.unwind(bad.frame(), bad.target());
      CHECK(r.status == Status::NoInfo);
      CHECK(r.detail == "Go's cgo call: the goroutine's saved stack is not readable or not consistent");
    }
  }
  SECTION("a g whose stack bounds are reversed") {
    Fixture::word(fx.g, 0, GoStack + GoStackSize);
    Fixture::word(fx.g, 8, GoStack);
    CHECK(unwinder.unwind(fx.frame(), fx.target()).status == Status::NoInfo);
  }
}

TEST_CASE("Go cgo call: the walker takes the goroutine's frame below the system stack", "[go][walk]") {
  // A call through a null pointer in C, its return address asmcgocall's.
  Fixture fx;
  Fixture::word(fx.systemStack, FrameSp - 8 - SystemStack, AfterSwitchedCall);
  ThreadInfo thread;
  thread.context = registersAt(0, FrameSp - 8, {});
  BadCallUnwinder badCall;
  GoStackSwitchUnwinder goSwitch;
  StackWalker walker(fx.target(), thread, std::vector<Unwinder *>{&badCall, &goSwitch});
  std::vector<Frame> frames = walkAll(walker);
  REQUIRE(frames.size() == 3);
  CHECK(frames[1].ip == AfterSwitchedCall);
  CHECK(frames[2].ip == CgocallReturn);
  CHECK(frames[2].sp == EntrySp + 8);
  CHECK(frames[2].sp < frames[1].sp);
  CHECK(frames[2].trust == FrameTrust::RuntimeFrame);
  CHECK(frames[2].onOtherStack);
}

TEST_CASE("Go cgo call without asmcgocall's code: the walk stops there, saying why, where a symbol file names it",
          "[go]") {
  // A minidump walked with Breakpad symbol files: stacks, no code bytes.
  auto symbols = [](const char *function) {
    std::string text = std::string("MODULE Linux x86_64 00 go\nFUNC 100 80 0 ") + function + "\n";
    auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy(text), "go.sym");
    REQUIRE(bool(file));
    return std::move(*file);
  };
  auto unwindWithout = [](std::unique_ptr<BreakpadSymbolFile> file) {
    Module module = makeModule("go", Code, Page);
    module.symbolFile = std::move(file);
    auto target = makeTarget(Arch::X86_64, OS::Linux, makeMemory({{SystemStack, std::vector<uint8_t>(Page, 0)}}), {},
                             {std::move(module)});
    return GoStackSwitchUnwinder().unwind(makeFrame(*target, AfterSwitchedCall, FrameSp, FrameTrust::Cfi, {}), *target);
  };
  UnwindResult r = unwindWithout(symbols("runtime.asmcgocall"));
  CHECK(r.status == Status::CannotContinue);
  CHECK(r.detail.starts_with("Go's cgo call: the goroutine's stack is found from what runtime.asmcgocall saved"));
  CHECK(unwindWithout(symbols("runtime.cgocall")).status == Status::NoInfo); // another function: not its frame
}
