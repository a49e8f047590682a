// The .NET runtime's two unwinders on a hand-built process (FakeDotnetProcess.h):
// ManagedCodeUnwinder through the runtime's code map and the unwind info it
// keeps for JIT-compiled code, RuntimeFrameUnwinder through a thread's Frame
// chain. Each case checks the caller's registers or the refusal's reason.
#include "FakeDotnetProcess.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/frames/ManagedUnwinders.h"
#include "stackwalk/frames/RuntimeFrames.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>

using namespace stackwalk;
using namespace stackwalk::frames;
using namespace stackwalk::fake;

namespace {

RuntimeFrame runtimeFrame(uint64_t address, uint64_t identifier, std::string name) {
  return RuntimeFrame{address, identifier, std::move(name)};
}

} // namespace

TEST_CASE("the fake process: its runtime opens, its code map answers", "[managed]") {
  FakeDotnetProcess process;
  DotnetRuntime &runtime = process.runtime();
  CHECK(runtime.descriptor().origin().module == "exports.dll");
  CHECK(runtime.descriptor().origin().address == DescriptorAt);
  REQUIRE(runtime.threadByOsId(ThreadOsId));
  CHECK(runtime.threadByOsId(ThreadOsId)->managedId == ManagedThreadId);
  auto method = runtime.code().find(Method + 0x10);
  REQUIRE(bool(method));
  REQUIRE(*method);
  CHECK((*method)->kind == CodeBlock::Kind::Jitted);
  CHECK((*method)->start == Method);
  CHECK((*method)->unwindBase == JitBegin);
  REQUIRE((*method)->function);
  CHECK((*method)->function->begin == 0x1000);
  CHECK((*method)->function->unwindInfo == MethodUnwindInfoRva);
  auto stub = runtime.code().find(StubBegin + 0x10);
  REQUIRE(bool(stub));
  REQUIRE(*stub);
  CHECK((*stub)->kind == CodeBlock::Kind::Stub);
  CHECK((*stub)->start == StubBegin);
}

TEST_CASE("ManagedCodeUnwinder: JIT-compiled code is unwound by the runtime's unwind info", "[managed]") {
  // Method pushed rbx and took 0x20 bytes: rbx at sp+0x20, the return address at sp+0x28.
  FakeDotnetProcess process;
  constexpr uint64_t Caller = 0x7f2000001234;
  process.stackWord(Stack + 0x20, 0x7777);
  process.stackWord(Stack + 0x28, Caller);
  ManagedCodeUnwinder unwinder(process.runtime());
  CHECK(unwinder.trust() == FrameTrust::UnwindInfo);
  UnwindResult r = unwinder.unwind(process.walkFrame(MethodReturn, Stack, /*exact=*/false), process.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == Caller);
  CHECK(r.caller.sp() == Stack + 0x30);
  CHECK(r.caller.get(Rbx) == 0x7777u);  // restored from the stack
  CHECK(r.caller.get(Rbp) == 0xb0b0u);  // nonvolatile, untouched
  CHECK(r.caller.get(R12) == 0x1212u);
  CHECK_FALSE(r.caller.isKnown(Rax));   // volatile
  CHECK_FALSE(r.callerIpIsExact);
  CHECK_FALSE(r.trust);
}

TEST_CASE("ManagedCodeUnwinder: a Linux thread's managed caller does not get the callee's rsi and rdi",
          "[managed]") {
  // CoreCLR's JIT follows the System V ABI on Linux x64 (rsi and rdi are
  // argument registers, not preserved): the callee's rsi and rdi say nothing
  // of the caller's, though Windows would preserve them.
  FakeDotnetProcess process;
  process.stackWord(Stack + 0x20, 0x7777);
  process.stackWord(Stack + 0x28, 0x7f2000001234);
  ManagedCodeUnwinder unwinder(process.runtime());
  REQUIRE(process.target().os() == OS::Linux);
  UnwindResult r = unwinder.unwind(process.walkFrame(MethodReturn, Stack, /*exact=*/false), process.target());
  REQUIRE(r.status == Status::Caller);
  CHECK_FALSE(r.caller.isKnown(Rsi));
  CHECK_FALSE(r.caller.isKnown(Rdi));
}

TEST_CASE("ManagedCodeUnwinder: code the runtime does not manage, or cannot describe", "[managed]") {
  FakeDotnetProcess process;
  ManagedCodeUnwinder unwinder(process.runtime());
  const std::pair<uint64_t, std::string> refusals[] = {
      // No range section: native addresses, and one in the code heap before any method: not
      // this unwinder's kind of frame, so no detail (a stop names what the native unwinders found).
      {0x401000, ""},
      {RuntimeBase + 0x1000, ""},
      {JitBegin + 0x10, ""},
      {JitEnd + 0x2000, ""},
      {StubBegin + 0x10, "a runtime stub without unwind info"},
      {JitStub + 4, "a runtime stub without unwind info"},
      {NoUnwind + 4, "managed code without a RUNTIME_FUNCTION"},
      {LostInfo + 4, "managed unwind info: UNWIND_INFO at 0x7f100000f000 is not readable"},
      {BrokenMapAddress + 0x1000,
       "the runtime's code map: a range-section map slot at 0xdead0000 is not in the dump"},
  };
  for (const auto &[ip, detail] : refusals) {
    INFO(ip);
    UnwindResult r = unwinder.unwind(process.walkFrame(ip, Stack, /*exact=*/true), process.target());
    CHECK(r.status == Status::NoInfo);
    CHECK(r.detail == detail);
  }
}

TEST_CASE("ManagedCodeUnwinder: describesCodeAt is the code map's answer", "[managed]") {
  FakeDotnetProcess process;
  ManagedCodeUnwinder unwinder(process.runtime());
  const Target &target = process.target();
  CHECK(unwinder.describesCodeAt(Method, target));
  CHECK(unwinder.describesCodeAt(MethodReturn, target));
  CHECK(unwinder.describesCodeAt(StubBegin, target));
  CHECK(unwinder.describesCodeAt(StubEnd - 1, target));
  CHECK(unwinder.describesCodeAt(JitStub, target));
  CHECK(unwinder.describesCodeAt(NoUnwind, target));
  CHECK_FALSE(unwinder.describesCodeAt(StubEnd, target));
  CHECK_FALSE(unwinder.describesCodeAt(JitBegin + 0x10, target)); // in the heap, before any method
  CHECK_FALSE(unwinder.describesCodeAt(0x401000, target));
  CHECK_FALSE(unwinder.describesCodeAt(BrokenMapAddress + 0x1000, target)); // an error is not code
}

namespace {

// A Frame chain on the stack, innermost first:
//   0x100  InlinedCallFrame, active: returns to InlinedReturn, CallSiteSP 0x180, fp 0x1f0
//   0x200  a Frame no global names (no context)
//   0x300  InlinedCallFrame without an active call (no context)
//   0x400  FaultingExceptionFrame: CONTEXT inline, rip FaultIp, rsp 0x600
//   0xa00  ResumableFrame: CONTEXT at 0x1000, rip ResumeIp, rsp 0xb00
//   0xc00  InlinedCallFrame, active: returns to OuterReturn, CallSiteSP 0xd00
constexpr uint64_t InlinedReturn = 0x7f1000001015, FaultIp = 0x7f1000001004, ResumeIp = 0x7f1000004010,
                   OuterReturn = 0x7f2000000100;

// The caller, by the runtime's Frames, of the thread's context frame at sp,
// whose ip (0x7f3000000010) is native code outside the code map.
UnwindResult unwindAt(RuntimeFrameUnwinder &unwinder, FakeDotnetProcess &process, uint64_t sp) {
  return unwinder.unwind(process.walkFrame(0x7f3000000010, sp, true), process.target());
}

void writeChain(FakeDotnetProcess &process) {
  process.inlinedCallFrame(Stack + 0x100, Stack + 0x200, InlinedReturn, Stack + 0x180, Stack + 0x1f0);
  process.frame(Stack + 0x200, UnnamedFrameId, Stack + 0x300);
  process.inlinedCallFrame(Stack + 0x300, Stack + 0x400, 0, Stack + 0x380, 0);
  process.faultingExceptionFrame(Stack + 0x400, Stack + 0xa00,
                                 windowsContext(1 | 2, FaultIp, Stack + 0x600, {{Rbx, 0xfb}, {Rbp, Stack + 0x640}}));
  process.resumableFrame(Stack + 0xa00, Stack + 0xc00, Stack + 0x1000);
  process.memory.bytes(Stack + 0x1000, windowsContext(1 | 2, ResumeIp, Stack + 0xb00, {{Rbx, 0xeb}}));
  process.inlinedCallFrame(Stack + 0xc00, FrameTop, OuterReturn, Stack + 0xd00, Stack + 0xd40);
  process.threadFirstFrame(Stack + 0x100);
}

std::vector<RuntimeFrame> readChain(FakeDotnetProcess &process) {
  FrameChain chain = readFrameChain(process.runtime().data(), Stack + 0x100);
  CHECK(chain.problem.empty());
  return chain.frames;
}

} // namespace

TEST_CASE("RuntimeFrameUnwinder: the chain reads back with its names", "[managed]") {
  FakeDotnetProcess process;
  writeChain(process);
  std::vector<RuntimeFrame> chain = readChain(process);
  REQUIRE(chain.size() == 6);
  CHECK(chain[0].name == "InlinedCallFrame");
  CHECK(chain[1].name.empty());
  CHECK(chain[1].identifier == UnnamedFrameId);
  CHECK(chain[3].name == "FaultingExceptionFrame");
  CHECK(chain[4].name == "ResumableFrame");
  CHECK(chain[5].address == Stack + 0xc00);
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);
  CHECK(unwinder.trust() == FrameTrust::RuntimeFrame);
}

TEST_CASE("RuntimeFrameUnwinder: the first Frame at or above sp that carries a context gives the caller",
          "[managed]") {
  FakeDotnetProcess process;
  writeChain(process);
  std::vector<RuntimeFrame> chain = readChain(process);
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);

  SECTION("below every Frame: the innermost InlinedCallFrame, a call's return address") {
    UnwindResult r = unwindAt(unwinder, process, Stack + 0x50);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == InlinedReturn);
    CHECK(r.caller.sp() == Stack + 0x180);
    CHECK(r.caller.fp() == Stack + 0x1f0);
    CHECK(known(r.caller) == std::vector<unsigned>{Rbp, Rsp, Rip}); // nothing else: not rbx, not r12
    CHECK_FALSE(r.callerIpIsExact);
    CHECK_FALSE(r.trust);
  }
  SECTION("above the first: Frames below sp are skipped, and Frames without a context") {
    // 0x100 is below sp; 0x200 is unnamed, 0x300 has no active call; 0x400 faulted.
    UnwindResult r = unwindAt(unwinder, process, Stack + 0x190);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == FaultIp);
    CHECK(r.caller.sp() == Stack + 0x600);
    CHECK(r.caller.get(Rbx) == 0xfbu);
    CHECK(r.caller.get(Rbp) == Stack + 0x640);
    CHECK(r.caller.get(Rsi) == 0u); // the CONTEXT's INTEGER group is all there, zeros and all
    CHECK(r.callerIpIsExact);       // an interrupted instruction, not a return address
  }
  SECTION("exactly at a Frame's address: that Frame is used") {
    UnwindResult r = unwindAt(unwinder, process, Stack + 0x400);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == FaultIp);
  }
  SECTION("a ResumableFrame's context is an interrupted one too") {
    UnwindResult r = unwindAt(unwinder, process, Stack + 0x700);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == ResumeIp);
    CHECK(r.caller.sp() == Stack + 0xb00);
    CHECK(r.caller.get(Rbx) == 0xebu);
    CHECK(r.callerIpIsExact);
  }
  SECTION("the outermost InlinedCallFrame") {
    UnwindResult r = unwindAt(unwinder, process, Stack + 0xb80);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == OuterReturn);
    CHECK(r.caller.sp() == Stack + 0xd00);
    CHECK(r.caller.fp() == Stack + 0xd40);
    CHECK_FALSE(r.callerIpIsExact);
  }
  SECTION("above every Frame: no caller") {
    UnwindResult r = unwindAt(unwinder, process, Stack + 0xc08);
    CHECK(r.status == Status::NoInfo);
    CHECK(r.detail == "no runtime Frame above the stack pointer carries a context");
  }
}

TEST_CASE("RuntimeFrameUnwinder: a Frame whose context is not above sp, or has no sp, is passed over",
          "[managed]") {
  FakeDotnetProcess process;
  // 0x1800: an InlinedCallFrame whose call site is below it (0x1700);
  // 0x1900: a ResumableFrame whose CONTEXT claims only INTEGER (no rip, no rsp).
  process.inlinedCallFrame(Stack + 0x1800, Stack + 0x1900, OuterReturn, Stack + 0x1700, 0);
  process.resumableFrame(Stack + 0x1900, FrameTop, Stack + 0x1000);
  process.memory.bytes(Stack + 0x1000, windowsContext(2, ResumeIp, Stack + 0x1a00, {{Rbx, 0xeb}}));
  std::vector<RuntimeFrame> chain = {runtimeFrame(Stack + 0x1800, InlinedCallFrameId, "InlinedCallFrame"),
                                     runtimeFrame(Stack + 0x1900, ResumableFrameId, "ResumableFrame")};
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);
  UnwindResult passed = unwindAt(unwinder, process, Stack + 0x1780);
  CHECK(passed.status == Status::NoInfo);
  CHECK(passed.detail == "no runtime Frame above the stack pointer carries a context");
  // Lower down, the InlinedCallFrame's call site is above sp.
  UnwindResult used = unwindAt(unwinder, process, Stack + 0x1600);
  REQUIRE(used.status == Status::Caller);
  CHECK(used.caller.pc() == OuterReturn);
  CHECK(used.caller.sp() == Stack + 0x1700);
}

TEST_CASE("RuntimeFrameUnwinder: a Frame that does not read back ends the search with its reason",
          "[managed]") {
  FakeDotnetProcess process;
  writeChain(process);
  // A ResumableFrame whose CONTEXT pointer leads out of the dump, then the
  // good chain: the unwinder reports the first and does not look further.
  process.resumableFrame(Stack + 0x80, Stack + 0x100, 0x5000000);
  std::vector<RuntimeFrame> chain = {runtimeFrame(Stack + 0x80, ResumableFrameId, "ResumableFrame")};
  for (const RuntimeFrame &frame : readChain(process)) chain.push_back(frame);
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);
  UnwindResult r = unwindAt(unwinder, process, Stack + 0x50);
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail == "ResumableFrame at 0x7ffd0080: the CONTEXT saved at 0x5000000 is not in the dump");
  // Once sp is past it, the next Frame is used.
  UnwindResult past = unwindAt(unwinder, process, Stack + 0x90);
  REQUIRE(past.status == Status::Caller);
  CHECK(past.caller.pc() == InlinedReturn);
}

TEST_CASE("RuntimeFrameUnwinder: an empty chain has nothing to say", "[managed]") {
  FakeDotnetProcess process;
  std::vector<RuntimeFrame> chain;
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);
  UnwindResult r = unwindAt(unwinder, process, Stack);
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail == "no runtime Frame above the stack pointer carries a context");
}

TEST_CASE("RuntimeFrameUnwinder: a fault the chain saved makes a caller found there exact", "[managed]") {
  // The FaultingExceptionFrame at 0x400 saved rip FaultIp, rsp 0x600; the
  // ResumableFrame at 0xa00 saved ResumeIp, rsp 0xb00 (a resumed thread,
  // also interrupted); the InlinedCallFrames record calls, not interruptions.
  FakeDotnetProcess process;
  writeChain(process);
  std::vector<RuntimeFrame> chain = readChain(process);
  RuntimeFrameUnwinder unwinder(process.runtime(), chain);
  const Target &target = process.target();
  CHECK(unwinder.recordedInterruption(FaultIp, Stack + 0x600, target));
  CHECK(unwinder.recordedInterruption(ResumeIp, Stack + 0xb00, target));
  CHECK_FALSE(unwinder.recordedInterruption(FaultIp, Stack + 0x608, target)); // the same ip, another frame
  CHECK_FALSE(unwinder.recordedInterruption(FaultIp + 1, Stack + 0x600, target));
  CHECK_FALSE(unwinder.recordedInterruption(OuterReturn, Stack + 0xd00, target)); // a call's return address
}

// A stack overflow: the handler runs on an alternate signal stack, above the
// thread's stack in memory, and its FaultingExceptionFrame lies there, the
// thread's Frames below it; the handler's CFI reaches the faulting ip with a
// stack pointer on the alternate stack.
TEST_CASE("RuntimeFrameUnwinder: a fault saved on an alternate signal stack", "[managed]") {
  constexpr uint64_t Alternate = Stack + 0x100000;
  FakeDotnetProcess process;
  process.faultingExceptionFrame(Alternate + 0x100, Stack + 0xc00,
                                 windowsContext(1 | 2, FaultIp, Stack + 0x600, {{Rbx, 0xfb}}));
  process.inlinedCallFrame(Stack + 0xc00, FrameTop, OuterReturn, Stack + 0xd00, Stack + 0xd40);
  process.threadFirstFrame(Alternate + 0x100);
  bool mapped = GENERATE(false, true);
  if (mapped) // the dump's mappings: the thread's stack and the alternate one
    process.regions = {{Stack, Stack + 0x10000, true, true, false}, {Alternate, Alternate + 0x1000, true, true, false}};
  FrameChain chain = readFrameChain(process.runtime().data(), Alternate + 0x100);
  CHECK(chain.problem.empty()); // the Frames after it lie above the faulting sp
  REQUIRE(chain.frames.size() == 2);
  RuntimeFrameUnwinder unwinder(process.runtime(), chain.frames);
  auto context = unwinder.recordedInterruption(FaultIp, Alternate + 0x80, process.target());
  if (!mapped) {
    CHECK_FALSE(context); // nothing says which stack
    return;
  }
  REQUIRE(context); // the saved context, on the thread's stack
  CHECK(context->sp() == Stack + 0x600);
  CHECK(context->get(Rbx) == 0xfbu);
}

TEST_CASE("readFrameChain: a Frame below the faulting sp after a FaultingExceptionFrame is refused", "[managed]") {
  constexpr uint64_t Alternate = Stack + 0x100000;
  FakeDotnetProcess process;
  process.faultingExceptionFrame(Alternate + 0x100, Stack + 0x400, windowsContext(1 | 2, FaultIp, Stack + 0x600, {}));
  process.inlinedCallFrame(Stack + 0x400, FrameTop, OuterReturn, Stack + 0xd00, Stack + 0xd40);
  FrameChain chain = readFrameChain(process.runtime().data(), Alternate + 0x100);
  CHECK(chain.problem == "the Frame at " + hex(Stack + 0x400) + " is not above the one before it on the stack");
}

TEST_CASE("HijackUnwinder: the hijack stub's frame resumes at its HijackFrame's registers", "[managed]") {
  // The runtime's function pushed the HijackFrame at 0x100; the stub's
  // HijackArgs lie at 0x180 (80 bytes: the hijacked method's sp is 0x1d0).
  FakeDotnetProcess process;
  process.hijackFrame(Stack + 0x100, FrameTop, MethodReturn, Stack + 0x180, 0xbb, Stack + 0x300);
  process.threadFirstFrame(Stack + 0x100);
  std::vector<RuntimeFrame> chain = readChain(process);
  REQUIRE(chain.size() == 1);
  HijackUnwinder unwinder(process.runtime(), chain);
  CHECK(unwinder.trust() == FrameTrust::RuntimeFrame);
  auto unwindAt = [&](uint64_t sp) { return unwinder.unwind(process.walkFrame(0x7f3000000010, sp, false), process.target()); };

  SECTION("the stub's frame, between the Frame and its HijackArgs") {
    UnwindResult r = unwindAt(Stack + 0x150);
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == MethodReturn);
    CHECK(r.caller.sp() == Stack + 0x1d0);
    CHECK(r.caller.get(Rbx) == 0xbbu);
    CHECK(r.caller.get(Rbp) == Stack + 0x300);
    CHECK_FALSE(r.callerIpIsExact); // a return address
  }
  SECTION("the stub's frame at its HijackArgs") {
    CHECK(unwindAt(Stack + 0x180).caller.pc() == MethodReturn);
  }
  SECTION("frames below the Frame (the runtime's, which pushed it) and above the stub's are not the stub's") {
    for (uint64_t sp : {Stack + 0x80, Stack + 0x100, Stack + 0x188}) {
      UnwindResult r = unwindAt(sp);
      CHECK(r.status == Status::NoInfo);
      CHECK(r.detail.empty());
    }
  }
}

TEST_CASE("HijackUnwinder: other Frames say nothing", "[managed]") {
  FakeDotnetProcess process;
  writeChain(process);
  std::vector<RuntimeFrame> chain = readChain(process);
  HijackUnwinder unwinder(process.runtime(), chain);
  UnwindResult r = unwinder.unwind(process.walkFrame(0x7f3000000010, Stack + 0x150, false), process.target());
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail.empty());
}
