#include "stackwalk/core/StackWalker.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <set>

using namespace stackwalk;

namespace {

// An unwinder that answers from a table: callee ip -> caller (ip, sp), or an end.
class TableUnwinder : public Unwinder {
public:
  explicit TableUnwinder(FrameTrust trust) : trust_(trust) {}
  FrameTrust trust() const override { return trust_; }
  UnwindResult unwind(const Frame &frame, const Target &) override {
    ++calls;
    if (ends.count(frame.ip)) return UnwindResult::endOfStack("table says end");
    auto it = callers.find(frame.ip);
    if (it == callers.end()) return UnwindResult::noInfo("not in table");
    UnwindResult result;
    result.status = UnwindResult::Status::Caller;
    result.caller = RegisterFile(frame.regs.arch());
    result.caller.setPc(it->second.first);
    result.caller.setSp(it->second.second);
    result.callerIpFromRegister = fromRegister.count(frame.ip) > 0;
    return result;
  }
  bool describesCodeAt(uint64_t address, const Target &) override { return knownCode.count(address) > 0; }
  std::optional<RegisterFile> recordedInterruption(uint64_t ip, uint64_t sp, const Target &target) override {
    for (auto [recordedIp, recordedSp] : interrupted) {
      const MemoryRegion *region = target.regionAt(sp);
      bool otherStack = region && !(recordedSp >= region->start && recordedSp < region->end);
      if (recordedIp != ip || (recordedSp != sp && !otherStack)) continue;
      RegisterFile context(target.arch());
      context.setPc(recordedIp);
      context.setSp(recordedSp);
      return context;
    }
    return std::nullopt;
  }
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> callers;
  std::set<std::pair<uint64_t, uint64_t>> interrupted; // (ip, sp) of saved faulting contexts
  std::set<uint64_t> knownCode; // addresses described as code
  std::set<uint64_t> ends;
  std::set<uint64_t> fromRegister; // callers whose ip the table reads from a register
  int calls = 0;

private:
  FrameTrust trust_;
};

struct Fixture {
  Target target;
  ThreadInfo thread;
  explicit Fixture(Arch arch = Arch::X86_64) : target(arch, OS::Linux, "test", std::make_unique<BufferMemory>()) {
    target.regions.push_back({0x1000, 0x2000, true, false, true}); // code
    target.regions.push_back({0x8000, 0x9000, true, true, false}); // stack
    thread.context = RegisterFile(arch);
    thread.context.setPc(0x1100);
    thread.context.setSp(0x8100);
  }
  std::vector<Frame> walk(std::vector<Unwinder *> unwinders, StackWalker **out = nullptr, unsigned max = 100) {
    walker = std::make_unique<StackWalker>(target, thread, unwinders, WalkLimits{max});
    std::vector<Frame> frames;
    while (auto frame = walker->next()) frames.push_back(*frame);
    return frames;
  }
  std::unique_ptr<StackWalker> walker;
};

} // namespace

TEST_CASE("frames come from the first unwinder that knows the caller") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi), scan(FrameTrust::Scan);
  cfi.callers[0x1100] = {0x1200, 0x8200};
  scan.callers[0x1200] = {0x1300, 0x8300};
  cfi.ends.insert(0x1300);
  auto frames = f.walk({&cfi, &scan});
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].trust == FrameTrust::Context);
  CHECK(frames[0].ipIsExact);
  CHECK(frames[1].trust == FrameTrust::Cfi);
  CHECK_FALSE(frames[1].ipIsExact);
  CHECK(frames[1].lookupAddress() == 0x11ff);
  CHECK(frames[2].trust == FrameTrust::Scan);
  CHECK(frames[2].index == 2);
  CHECK(f.walker->stopReason() == StopReason::EndOfStack);
}

TEST_CASE("a caller whose stack pointer does not move up is refused") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {0x1200, 0x8100};
  auto frames = f.walk({&cfi});
  CHECK(frames.size() == 1);
  CHECK(f.walker->stopReason() == StopReason::SpNotIncreasing);
}

TEST_CASE("on arm64 the caller of an interrupted frame may share its stack pointer (a leaf), no other caller may") {
  Fixture f(Arch::Arm64);
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {0x1200, 0x8100}; // the leaf's caller: same sp
  cfi.callers[0x1200] = {0x1300, 0x8100}; // and its caller: same sp again
  auto frames = f.walk({&cfi});
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].ip == 0x1200);
  CHECK(f.walker->stopReason() == StopReason::SpNotIncreasing);
}

TEST_CASE("on x86-64 an interrupted frame's caller whose ip was a register may share its stack pointer") {
  // libgcc's eh_return epilogue at its `jmp *%rcx`: CFA = rsp, rip = rcx.
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {0x1200, 0x8100};
  cfi.fromRegister.insert(0x1100);
  cfi.callers[0x1200] = {0x1300, 0x8100}; // not interrupted: its caller must move up
  cfi.fromRegister.insert(0x1200);
  auto frames = f.walk({&cfi});
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].ip == 0x1200);
  CHECK(f.walker->stopReason() == StopReason::SpNotIncreasing);
}

TEST_CASE("arm64 return addresses lose their pointer-authentication bits") {
  Fixture f(Arch::Arm64);
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {0x002a000000001200, 0x8200}; // signed with the 48-bit address space's free bits
  cfi.callers[0x1200] = {0x0000ff0000001300, 0x8300}; // signed under a mask the dump records
  SECTION("by the user address space") {
    auto frames = f.walk({&cfi});
    REQUIRE(frames.size() == 2);
    CHECK(frames[1].ip == 0x1200);
  }
  SECTION("by the dump's mask") {
    f.target.pointerAuthMask = 0x00ffff0000000000; // NT_ARM_PAC_MASK's insn_mask
    cfi.callers[0x1100] = {0x0000420000001200, 0x8200};
    auto frames = f.walk({&cfi});
    REQUIRE(frames.size() == 3);
    CHECK(frames[1].ip == 0x1200);
    CHECK(frames[2].ip == 0x1300);
  }
  SECTION("by the highest address the dump knows, when it records no mask") {
    // A macOS signature begins at bit 47 and an Android one at bit 39, inside the 48 bits kept above.
    cfi.callers[0x1100] = {0x0028800000001200, 0x8200};
    cfi.callers[0x1200] = {0x00000f8000001300, 0x8300};
    f.target.inferPointerAuthMask();
    CHECK(f.target.pointerAuthMask == ~((uint64_t(1) << 39) - 1)); // a small dump: the smallest address size
    auto frames = f.walk({&cfi});
    REQUIRE(frames.size() == 3);
    CHECK(frames[1].ip == 0x1200);
    CHECK(frames[2].ip == 0x1300);
  }
  SECTION("the inferred mask keeps every address the dump knows") {
    f.target.regions.push_back({0x7ff000000000, 0x7ff000001000, true, true, false}); // a 47-bit stack
    f.target.inferPointerAuthMask();
    CHECK(f.target.pointerAuthMask == ~((uint64_t(1) << 47) - 1));
    f.target.pointerAuthMask.reset();
    f.target.regions.push_back({0xfffffffff000, 0x1000000000000, true, true, false}); // the top of 48 bits
    f.target.modules.push_back({});
    f.target.modules.back().base = 0xffff00000000000;                                 // above it: not believed
    f.target.modules.back().size = 0x1000;
    f.target.inferPointerAuthMask();
    CHECK(f.target.pointerAuthMask == ~((uint64_t(1) << 48) - 1));
  }
  SECTION("a recorded mask is kept") {
    f.target.pointerAuthMask = 0x00ffff0000000000;
    f.target.inferPointerAuthMask();
    CHECK(f.target.pointerAuthMask == 0x00ffff0000000000);
  }
  SECTION("not on x86-64") {
    Fixture x86;
    x86.target.inferPointerAuthMask();
    CHECK(!x86.target.pointerAuthMask);
    auto frames = x86.walk({&cfi});
    CHECK(frames.size() == 1);
    CHECK(x86.walker->stopReason() == StopReason::IpNotExecutable);
  }
}

TEST_CASE("a caller outside executable memory is refused") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {0x8800, 0x8200}; // points into the stack
  auto frames = f.walk({&cfi});
  CHECK(frames.size() == 1);
  CHECK(f.walker->stopReason() == StopReason::IpNotExecutable);
}

TEST_CASE("a caller in code an unwinder describes needs no executable region (JIT code in a dump without regions)") {
  Fixture f;
  f.target.regions.clear(); // as Wine's minidumps: no MemoryInfoList
  TableUnwinder native(FrameTrust::Cfi), managed(FrameTrust::UnwindInfo);
  native.callers[0x1100] = {0x5001, 0x8200}; // a native callee returns into JIT code
  managed.callers[0x5001] = {0x6001, 0x8300};
  managed.knownCode.insert(0x5000); // the call before the return address 0x5001
  auto frames = f.walk({&managed, &native});
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].ip == 0x5001);
  CHECK(frames[1].trust == FrameTrust::Cfi);
  CHECK(f.walker->stopReason() == StopReason::IpNotExecutable); // 0x6001: nobody describes 0x6000
}

TEST_CASE("in a dump without mappings, unwind data's caller outside every module is taken (JIT code), a scan's "
          "is not") {
  constexpr uint64_t Jit = 0x7f0000001005;
  Fixture f;
  f.target.regions.clear(); // a Breakpad Windows dump, a core converted to a minidump
  TableUnwinder unwinder(FrameTrust::Cfi);
  unwinder.callers[0x1100] = {Jit, 0x8200};
  for (FrameTrust trust : {FrameTrust::Cfi, FrameTrust::UnwindInfo, FrameTrust::Dynamic, FrameTrust::FramePointer}) {
    TableUnwinder found(trust);
    found.callers = unwinder.callers;
    auto frames = f.walk({&found});
    REQUIRE(frames.size() == 2);
    CHECK(frames[1].ip == Jit);
  }
  SECTION("a scan's candidate must be in a module") {
    TableUnwinder scan(FrameTrust::Scan);
    scan.callers = unwinder.callers;
    CHECK(f.walk({&scan}).size() == 1);
    CHECK(f.walker->stopReason() == StopReason::IpNotExecutable);
  }
  SECTION("where the dump records mappings, it says what is code") {
    f.target.regions.push_back({0x8000, 0x9000, true, true, false});
    CHECK(f.walk({&unwinder}).size() == 1);
    CHECK(f.walker->stopReason() == StopReason::IpNotExecutable);
  }
  SECTION("no user-space address: below 64 KiB, above 2^47 on x86-64") {
    unwinder.callers[0x1100] = {0xfff0, 0x8200};
    CHECK(f.walk({&unwinder}).size() == 1);
    unwinder.callers[0x1100] = {uint64_t(1) << 47, 0x8200};
    CHECK(f.walk({&unwinder}).size() == 1);
  }
}

TEST_CASE("in a dump without mappings, an address on the stack is no code (_start's CFI in a symbol file reads a "
          "pushed stack pointer)") {
  constexpr uint64_t Stack = 0x7ffd00000000;
  auto memory = std::make_unique<BufferMemory>();
  memory->add(Stack, std::vector<uint8_t>(0x2000, 0));
  Target target(Arch::X86_64, OS::Linux, "test", std::move(memory));
  Module app;
  app.name = "app";
  app.base = 0x1000;
  app.size = 0x1000;
  target.modules.push_back(app);
  ThreadInfo thread;
  thread.context = RegisterFile(Arch::X86_64);
  thread.context.setPc(0x1100);
  thread.context.setSp(Stack + 0x100);
  TableUnwinder cfi(FrameTrust::Cfi);
  cfi.callers[0x1100] = {Stack + 0x1f00, Stack + 0x200}; // on the stack the dump holds
  StackWalker walker(target, thread, {&cfi}, WalkLimits{10});
  REQUIRE(walker.next());
  CHECK_FALSE(walker.next());
  CHECK(walker.stopReason() == StopReason::IpNotExecutable);
  CHECK(target.mayBeUnplacedCode(Stack + 0x3000)); // past the stack the dump holds: may be code
}

TEST_CASE("an unwinder that knows the caller cannot be found stops the walk: no later unwinder guesses") {
  Fixture f;
  class Knowing : public TableUnwinder {
  public:
    Knowing() : TableUnwinder(FrameTrust::RuntimeFrame) {}
    UnwindResult unwind(const Frame &, const Target &) override { return UnwindResult::cannotContinue("known gap"); }
  } knowing;
  TableUnwinder scan(FrameTrust::Scan);
  scan.callers[0x1100] = {0x1200, 0x8200};
  CHECK(f.walk({&knowing, &scan}).size() == 1);
  CHECK(f.walker->stopReason() == StopReason::NoUnwindInfo);
  CHECK(f.walker->stopDetail() == "known gap");
  CHECK(scan.calls == 0);
}

TEST_CASE("a null return address ends the walk without asking the fallbacks") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi), scan(FrameTrust::Scan);
  cfi.callers[0x1100] = {0, 0x8200};
  scan.callers[0x1100] = {0x1300, 0x8300};
  auto frames = f.walk({&cfi, &scan});
  CHECK(frames.size() == 1);
  CHECK(f.walker->stopReason() == StopReason::NullIp);
  CHECK(scan.calls == 0);
}

// The scan may take a stale copy of a return address; the unwind data of its
// code then reads slots that later calls have written, zeros among them.
TEST_CASE("above a frame the scan found, a null return address does not end the walk: the fallbacks look on") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi), scan(FrameTrust::Scan);
  scan.callers[0x1100] = {0x1200, 0x8200}; // found by the scan
  cfi.callers[0x1200] = {0, 0x8300};       // its unwind data reads a zero
  scan.callers[0x1200] = {0x1400, 0x8400}; // the scan above it finds the true caller
  cfi.ends.insert(0x1400);
  auto frames = f.walk({&cfi, &scan});
  REQUIRE(frames.size() == 3);
  CHECK(frames[2].ip == 0x1400);
  CHECK(frames[2].trust == FrameTrust::Scan);
  CHECK(f.walker->stopReason() == StopReason::EndOfStack);

  SECTION("where the scan finds nothing either, the walk is cut short there, not ended, and says both") {
    scan.callers.erase(0x1200);
    auto shorter = f.walk({&cfi, &scan});
    CHECK(shorter.size() == 2);
    CHECK(f.walker->stopReason() == StopReason::NoUnwindInfo);
    CHECK(f.walker->stopDetail() == "the return address by cfi is 0 above a frame the scan found; not in table");
  }
}

TEST_CASE("without any unwind information the walk says so") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi);
  auto frames = f.walk({&cfi});
  CHECK(frames.size() == 1);
  CHECK(f.walker->stopReason() == StopReason::NoUnwindInfo);
  CHECK(f.walker->stopDetail() == "not in table");
}

TEST_CASE("when every unwinder fails, the stop's detail says what each one found") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi), framePointer(FrameTrust::FramePointer), scan(FrameTrust::Scan);
  framePointer.callers[0x1100] = {0x1200, 0x8100}; // a caller whose stack pointer did not move up
  auto frames = f.walk({&cfi, &framePointer, &scan});
  CHECK(frames.size() == 1);
  // A refused caller is the reason; the unwinders that knew nothing are said too.
  CHECK(f.walker->stopReason() == StopReason::SpNotIncreasing);
  CHECK(f.walker->stopDetail() == "not in table; the caller by frame_pointer is refused: the caller's stack pointer is "
                                  "not above the callee's; not in table");
}

TEST_CASE("the frame limit stops the walk") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi);
  for (uint64_t i = 0; i < 50; ++i) cfi.callers[0x1100 + i] = {0x1101 + i, 0x8101 + i * 8};
  auto frames = f.walk({&cfi}, nullptr, 10);
  CHECK(frames.size() == 10);
  CHECK(f.walker->stopReason() == StopReason::MaxFrames);
}

TEST_CASE("a context without a stack pointer gives no frame") {
  Fixture f;
  f.thread.context.forget(7);
  TableUnwinder cfi(FrameTrust::Cfi);
  CHECK(f.walk({&cfi}).empty());
  CHECK(f.walker->stopReason() == StopReason::NoContext);
}

TEST_CASE("a thread the dump records no context for stops saying so") {
  Fixture f;
  f.thread.contextAbsent = true;
  TableUnwinder cfi(FrameTrust::Cfi);
  CHECK(f.walk({&cfi}).empty());
  CHECK(f.walker->stopReason() == StopReason::NoContext);
  CHECK(f.walker->stopDetail() == "the dump records no context for this thread");
}

TEST_CASE("module lookup and memory reads go through the target") {
  Target target(Arch::X86_64, OS::Linux, "test", std::make_unique<BufferMemory>());
  Module a, b;
  a.name = "a";
  a.base = 0x1000;
  a.size = 0x100;
  b.name = "b";
  b.base = 0x3000;
  b.size = 0x100;
  target.modules = {b, a};
  target.sortModules();
  CHECK(target.moduleAt(0x1050)->name == "a");
  CHECK(target.moduleAt(0x3000)->name == "b");
  CHECK(target.moduleAt(0x1100) == nullptr);
  CHECK(target.moduleAt(0x500) == nullptr);
}

TEST_CASE("buffer memory reads whole ranges only, and C strings stop at NUL or the limit") {
  BufferMemory memory;
  memory.add(0x100, {'h', 'i', 0, 'x'});
  memory.add(0x200, std::vector<uint8_t>(100, 'a'));
  CHECK(memory.readCString(0x100) == "hi");
  CHECK_FALSE(memory.readCString(0x200, 50));
  CHECK_FALSE(memory.readCString(0x200)); // runs off the end without a NUL
  uint8_t buffer[8];
  CHECK_FALSE(memory.read(0x102, buffer));
  CHECK(memory.readValue<uint16_t>(0x100) == uint16_t('h' | ('i' << 8)));
}

TEST_CASE("a caller at a fault another unwinder recorded has an exact ip (looked up at ip, not ip - 1)") {
  Fixture f;
  TableUnwinder cfi(FrameTrust::Cfi), runtime(FrameTrust::RuntimeFrame);
  cfi.callers[0x1100] = {0x1200, 0x8200}; // a signal handler's CFI gives the faulting context
  cfi.callers[0x1200] = {0x1300, 0x8300};
  runtime.interrupted.insert({0x1200, 0x8200});
  runtime.interrupted.insert({0x1300, 0x8308}); // the same ip, another frame: not this one
  auto frames = f.walk({&cfi, &runtime});
  REQUIRE(frames.size() == 3);
  CHECK(frames[1].ipIsExact);
  CHECK(frames[1].lookupAddress() == 0x1200);
  CHECK(frames[1].trust == FrameTrust::Cfi);
  CHECK_FALSE(frames[2].ipIsExact);
  CHECK(frames[2].lookupAddress() == 0x12ff);
}

TEST_CASE("a fault reached from an alternate signal stack continues from the recorded context") {
  // A stack overflow's handler runs on an alternate stack; its frames' CFI
  // gives the faulting ip with a stack pointer there. The Frame the runtime
  // saved holds the thread's own.
  Fixture f;
  f.target.regions.push_back({0x9000, 0xa000, true, true, false}); // the alternate signal stack
  f.thread.context.setSp(0x9010);
  TableUnwinder cfi(FrameTrust::Cfi), runtime(FrameTrust::RuntimeFrame);
  cfi.callers[0x1100] = {0x1200, 0x9100};
  cfi.callers[0x1200] = {0x1300, 0x8300}; // from the faulting frame on the thread's stack
  runtime.interrupted.insert({0x1200, 0x8200});
  auto frames = f.walk({&cfi, &runtime});
  REQUIRE(frames.size() == 3);
  CHECK(frames[1].sp == 0x8200);
  CHECK(frames[1].ipIsExact);
  CHECK(frames[2].ip == 0x1300);
}
