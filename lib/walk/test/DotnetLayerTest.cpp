// .NET's ManagedRuntime (DotnetLayer) on the hand-built process of
// lib/frames/test/FakeDotnetProcess.h: opening the runtime, a thread's
// runtime state, its capital-F Frames as report entries at their place, and
// managed frames, with --managed-only's ip taken from a transition Frame.
#include "DotnetLayer.h"

#include "FakeDotnetProcess.h"

#include "stackwalk/core/Hex.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::fake;

namespace {

// The thread's Frame chain, innermost first:
//   0x100  InlinedCallFrame, active: returns to InlinedReturn, CallSiteSP 0x180, fp 0x1f0
//   0x200  a Frame no global names
//   0x400  FaultingExceptionFrame: CONTEXT inline, rip FaultIp, rsp 0x600
//   0xa00  ResumableFrame whose CONTEXT pointer leads out of the dump
constexpr uint64_t InlinedReturn = Method + 0x10, FaultIp = 0x7f3000000040, LostContext = 0x5000000;

struct Fixture {
  FakeDotnetProcess process;
  std::unique_ptr<ManagedRuntime> managed;
  std::vector<std::string> warnings;
  std::string unreadable;
  ReportThread thread; // the process's managed thread

  Fixture() {
    thread.tid = ThreadOsId;
    process.inlinedCallFrame(Stack + 0x100, Stack + 0x200, InlinedReturn, Stack + 0x180, Stack + 0x1f0);
    process.frame(Stack + 0x200, UnnamedFrameId, Stack + 0x400);
    process.faultingExceptionFrame(Stack + 0x400, Stack + 0xa00,
                                   windowsContext(1 | 2, FaultIp, Stack + 0x600, {{Rbx, 0xfb}}));
    process.resumableFrame(Stack + 0xa00, FrameTop, LostContext);
    process.threadFirstFrame(Stack + 0x100);
    managed = openManagedRuntime(process.target(), warnings, unreadable);
    REQUIRE(managed);
  }
  std::unique_ptr<ManagedThreadWalk> beginThread(bool runtimeWalkOnly) {
    return managed->beginThread(thread, runtimeWalkOnly);
  }
};

ReportFrame entryOfKind(FrameKind kind) {
  ReportFrame entry;
  entry.kind = kind;
  return entry;
}

// A runtime Frame's entry carrying registers with this sp and pc.
ReportFrame runtimeEntry(uint64_t sp, uint64_t pc) {
  ReportFrame entry = entryOfKind(FrameKind::Runtime);
  RegisterFile regs(Arch::X86_64);
  regs.setSp(sp);
  regs.setPc(pc);
  entry.registers = regs;
  entry.ip = pc;
  return entry;
}

// --managed-only's case: [native, runtime Frame] before the physical frame
// at MethodReturn, and the Frame's sp is the frame's: the Frame's ip (the
// inlined P/Invoke helper's return address) replaces the frame's own.
constexpr uint64_t FrameIp = Method + 0x10, FrameSp = Stack + 0x180;

struct ManagedOnly : Fixture {
  Frame frame = process.walkFrame(MethodReturn, FrameSp, false);
  std::vector<ReportFrame> before = {entryOfKind(FrameKind::Native), runtimeEntry(FrameSp, FrameIp)};
  std::unique_ptr<ManagedThreadWalk> runtimeOnly = beginThread(true);

  std::optional<ReportFrame> entry() { return runtimeOnly->managedFrame(frame, before); }
};

} // namespace

TEST_CASE("DotnetLayer: the runtime is found through its descriptor and summarized", "[dotnet]") {
  Fixture fx;
  CHECK(fx.warnings.empty());
  RuntimeSummary summary = fx.managed->summary();
  CHECK(summary.kind == "coreclr");
  CHECK(summary.displayName == ".NET");
  CHECK(summary.module == "exports.dll");
  CHECK(summary.descriptorAddress == DescriptorAt);
  CHECK(summary.descriptorSource == "dump");
  CHECK(summary.version.empty()); // no CoreLib metadata, no version in the module
  CHECK(summary.contracts == std::map<std::string, unsigned>{{"ExecutionManager", 2}, {"StackWalk", 1}, {"Thread", 1}});
}

TEST_CASE("DotnetLayer: the runtime's details list its threads", "[dotnet]") {
  Fixture fx;
  RuntimeDetails details = fx.managed->details();
  CHECK(details.summary.module == "exports.dll");
  CHECK(details.pointerSize == 8);
  CHECK(details.types > 0);
  REQUIRE(details.threads.size() == 1);
  CHECK(details.threads[0].osId == ThreadOsId);
  CHECK(details.threads[0].address == ThreadAt);
  CHECK(details.threads[0].firstFrame == Stack + 0x100);
  CHECK(details.threadsProblem.empty());
}

TEST_CASE("DotnetLayer: no runtime, or a runtime module without its file", "[dotnet]") {
  std::vector<std::string> warnings;
  std::string unreadable;
  Target plain(Arch::X86_64, OS::Linux, "test", std::make_unique<BufferMemory>());
  CHECK_FALSE(openManagedRuntime(plain, warnings, unreadable));
  CHECK(warnings.empty()); // no runtime at all is not worth a warning
  CHECK_FALSE(unreadable.empty()); // but --runtime-info says why there is none
  plain.modules = {makeModule("libcoreclr.so", 0x7f0000000000, 0x1000)};
  CHECK_FALSE(openManagedRuntime(plain, warnings, unreadable));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].ends_with(unreadable));
  CHECK(warnings[0].rfind("the .NET runtime's managed frames are unavailable: the runtime module libcoreclr.so has no "
                          "file",
                          0) == 0);
}

TEST_CASE("DotnetLayer: a thread's managed id, and its Frame chain as the transition unwinder", "[dotnet]") {
  Fixture fx;
  auto walk = fx.beginThread(false);
  REQUIRE(walk);
  CHECK(fx.thread.managedThreadId == ManagedThreadId);
  CHECK(fx.thread.managedNote.empty());
  CHECK(fx.thread.lastThrown.empty());
  REQUIRE(walk->codeUnwinder());
  CHECK(walk->codeUnwinder()->trust() == FrameTrust::UnwindInfo);
  REQUIRE(walk->transitionUnwinder());
  Frame below = fx.process.walkFrame(0x7f3000000010, Stack + 0x50, true);
  UnwindResult r = walk->transitionUnwinder()->unwind(below, fx.process.target());
  REQUIRE(r.status == UnwindResult::Status::Caller);
  CHECK(r.caller.pc() == InlinedReturn);
  CHECK(r.caller.sp() == Stack + 0x180);

  ReportThread native;
  native.tid = ThreadOsId + 1;
  auto nativeWalk = fx.managed->beginThread(native, false);
  REQUIRE(nativeWalk);
  CHECK_FALSE(native.managedThreadId);
  CHECK(nativeWalk->codeUnwinder());
  CHECK(nativeWalk->transitionUnwinder() == nullptr);
  CHECK(nativeWalk->transitionFramesBelow(std::nullopt, below).empty());
}

TEST_CASE("DotnetLayer: transition Frames come once each, in stack order, below the caller's sp", "[dotnet]") {
  Fixture fx;
  auto walk = fx.beginThread(false);
  Frame frame = fx.process.walkFrame(0x7f3000000010, Stack + 0x50, true);

  // The first physical frame's caller is at 0x150: only the Frame at 0x100 is in it.
  std::vector<ReportFrame> first = walk->transitionFramesBelow(Stack + 0x150, frame);
  REQUIRE(first.size() == 1);
  CHECK(first[0].kind == FrameKind::Runtime);
  CHECK(first[0].trust == FrameTrust::RuntimeFrame);
  CHECK(first[0].frameName == "InlinedCallFrame");
  CHECK(first[0].frameAddress == Stack + 0x100);
  CHECK(first[0].sp == Stack + 0x100);
  CHECK(first[0].ip == InlinedReturn);
  REQUIRE(first[0].registers);
  CHECK(first[0].registers->sp() == Stack + 0x180);
  CHECK(first[0].note.empty());
  CHECK_FALSE(first[0].methodDesc); // the descriptor has no InlinedCallFrame.Datum

  // Asked again for the same frame: already given.
  CHECK(walk->transitionFramesBelow(Stack + 0x150, frame).empty());
  // A caller at 0x400 exactly: the Frame at 0x400 is the caller's, not this frame's.
  std::vector<ReportFrame> second = walk->transitionFramesBelow(Stack + 0x400, frame);
  REQUIRE(second.size() == 1);
  CHECK(second[0].frameName == "Frame 0x77");
  CHECK(second[0].frameAddress == Stack + 0x200);
  CHECK(second[0].ip == 0u);
  CHECK_FALSE(second[0].registers);
  CHECK(second[0].note.empty());

  // The outermost frame (no caller) takes the rest.
  std::vector<ReportFrame> rest = walk->transitionFramesBelow(std::nullopt, frame);
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].frameName == "FaultingExceptionFrame");
  CHECK(rest[0].ip == FaultIp);
  REQUIRE(rest[0].registers);
  CHECK(rest[0].registers->get(Rbx) == 0xfbu);
  CHECK(rest[1].frameName == "ResumableFrame");
  CHECK(rest[1].frameAddress == Stack + 0xa00);
  CHECK_FALSE(rest[1].registers);
  CHECK(rest[1].ip == 0u);
  CHECK(rest[1].note == "the CONTEXT saved at 0x5000000 is not in the dump");
  CHECK(walk->transitionFramesBelow(std::nullopt, frame).empty());
}

// A stack overflow's handler runs on an alternate signal stack, above the
// thread's in memory, and builds its FaultingExceptionFrame there; the
// thread's Frames lie below it, due once the walk is on the thread's stack.
TEST_CASE("DotnetLayer: past a FaultingExceptionFrame on an alternate stack, the thread's Frames wait for the walk",
          "[dotnet]") {
  constexpr uint64_t Alternate = Stack + 0x100000;
  FakeDotnetProcess process;
  process.faultingExceptionFrame(Alternate + 0x100, Stack + 0xa00,
                                 windowsContext(1 | 2, FaultIp, Stack + 0x600, {{Rbx, 0xfb}}));
  process.frame(Stack + 0xa00, UnnamedFrameId, FrameTop);
  process.threadFirstFrame(Alternate + 0x100);
  std::vector<std::string> warnings;
  std::string unreadable;
  auto managed = openManagedRuntime(process.target(), warnings, unreadable);
  REQUIRE(managed);
  ReportThread thread;
  thread.tid = ThreadOsId;
  auto walk = managed->beginThread(thread, false);
  CHECK(thread.managedNote.empty()); // the chain reads whole
  Frame handler = process.walkFrame(0x7f3000000010, Alternate + 0x80, false);
  std::vector<ReportFrame> onAlternate = walk->transitionFramesBelow(Alternate + 0x200, handler);
  REQUIRE(onAlternate.size() == 1);
  CHECK(onAlternate[0].frameName == "FaultingExceptionFrame");
  Frame faulting = process.walkFrame(FaultIp, Stack + 0x600, true);
  CHECK(walk->transitionFramesBelow(Stack + 0x700, faulting).empty());
  std::vector<ReportFrame> onThread = walk->transitionFramesBelow(Stack + 0xb00, faulting);
  REQUIRE(onThread.size() == 1);
  CHECK(onThread[0].frameAddress == Stack + 0xa00);
  SECTION("a walk that ends on the alternate stack still lists them") {
    ReportThread again;
    again.tid = ThreadOsId;
    auto ended = managed->beginThread(again, false);
    CHECK(ended->transitionFramesBelow(std::nullopt, handler).size() == 2);
  }
}

TEST_CASE("DotnetLayer: managed code gets a managed entry; native code and stubs none", "[dotnet]") {
  Fixture fx;
  auto walk = fx.beginThread(false);
  Frame frame = fx.process.walkFrame(MethodReturn, Stack + 0x30, false);
  std::optional<ReportFrame> entry = walk->managedFrame(frame, {});
  REQUIRE(entry);
  CHECK(entry->kind == FrameKind::Managed);
  CHECK(entry->trust == FrameTrust::UnwindInfo);
  CHECK(entry->ip == MethodReturn);
  CHECK(entry->sp == Stack + 0x30);
  CHECK(entry->functionOffset == 0x15u);
  REQUIRE(entry->registers);
  CHECK(entry->registers->get(Rbx) == 0xbbbbu);
  CHECK_FALSE(entry->methodDesc);
  CHECK(entry->note == "the runtime records no MethodDesc for this code");

  CHECK_FALSE(walk->managedFrame(fx.process.walkFrame(0x401000, Stack, true), {}));
  CHECK_FALSE(walk->managedFrame(fx.process.walkFrame(StubBegin + 0x10, Stack, true), {}));
  CHECK_FALSE(walk->managedFrame(fx.process.walkFrame(JitStub + 4, Stack, true), {}));
  CHECK(fx.thread.managedNote.empty());
  CHECK_FALSE(walk->managedFrame(fx.process.walkFrame(BrokenMapAddress, Stack, true), {})); // the map fails
  CHECK(fx.thread.managedNote.starts_with("the code map at " + hex(BrokenMapAddress) + ": "));
  std::string noted = fx.thread.managedNote;
  CHECK_FALSE(walk->managedFrame(fx.process.walkFrame(BrokenMapAddress + 8, Stack, true), {}));
  CHECK(fx.thread.managedNote == noted); // once per thread
  // A return address just past the method's start is looked up at the call.
  std::optional<ReportFrame> atStart = walk->managedFrame(fx.process.walkFrame(Method + 1, Stack, false), {});
  REQUIRE(atStart);
  CHECK(atStart->functionOffset == 1u);
}

TEST_CASE("DotnetLayer: --managed-only resumes a managed frame at the registers of the runtime Frame before it", "[dotnet]") {
  ManagedOnly fx;
  std::optional<ReportFrame> taken = fx.entry();
  REQUIRE(taken);
  CHECK(taken->ip == FrameIp);
  CHECK(taken->sp == FrameSp);

  SECTION("not in the mixed-mode walk") {
    auto mixed = fx.beginThread(false);
    CHECK(mixed->managedFrame(fx.frame, fx.before)->ip == MethodReturn);
  }
  SECTION("with the Frame's stack pointer where it is not the frame's own (an IL stub's call site)") {
    fx.before.back() = runtimeEntry(FrameSp + 0x70, FrameIp);
    CHECK(fx.entry()->ip == FrameIp);
    CHECK(fx.entry()->sp == FrameSp + 0x70);
  }
  SECTION("not when the Frame's registers resume in another method") {
    fx.before.back() = runtimeEntry(FrameSp, NoUnwind + 4);
    CHECK(fx.entry()->ip == MethodReturn);
    CHECK(fx.entry()->sp == FrameSp);
  }
  SECTION("not when the Frame's registers resume outside managed code") {
    fx.before.back() = runtimeEntry(FrameSp, 0x401000);
    CHECK(fx.entry()->ip == MethodReturn);
  }
  SECTION("not when the entry before the Frame is not native") {
    fx.before.front() = entryOfKind(FrameKind::Managed);
    CHECK(fx.entry()->ip == MethodReturn);
  }
  SECTION("not when the last entry is not a runtime Frame") {
    fx.before = {entryOfKind(FrameKind::Native), entryOfKind(FrameKind::Native)};
    fx.before.back().registers = runtimeEntry(FrameSp, FrameIp).registers;
    CHECK(fx.entry()->ip == MethodReturn);
  }
  SECTION("not when the Frame carries no registers") {
    fx.before.back().registers.reset();
    CHECK(fx.entry()->ip == MethodReturn);
  }
  SECTION("not with only the Frame before it") {
    fx.before.erase(fx.before.begin());
    CHECK(fx.entry()->ip == MethodReturn);
  }
}

TEST_CASE("DotnetLayer: with the ip from a runtime Frame, the function offset is that ip's", "[dotnet]") {
  // Not the physical frame's: the entry would say ip Method+0x10 but offset
  // 0x15, and the printers show "+0x15" next to an ip 0x10 into the method.
  ManagedOnly fx;
  std::optional<ReportFrame> taken = fx.entry();
  REQUIRE(taken);
  REQUIRE(taken->ip == FrameIp);
  CHECK(taken->functionOffset == FrameIp - Method);
}
