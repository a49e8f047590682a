// The unwinders of last resort (bad call, frame pointer, stack scan) on
// synthetic stacks, one unwinder at a time and then chained by the walker, in
// the manner of rust-minidump's per-unwinder tests.
#include "SyntheticStack.h"
#include "YamlImage.h"

#include "stackwalk/core/Auxv.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

// The address space (x86-64 unless a test says otherwise):
//   0x1000-0x2000  app's text: executable, in module "app"
//   0x2000-0x3000  app's data: readable, not executable, in module "app"
//   0x3000-0x4000  JIT code: executable, outside every module
//   0x8000-0xa000  the stack
//   0x5000         nothing mapped
constexpr uint64_t CodeStart = 0x1000, DataStart = 0x2000, JitStart = 0x3000, PageSize = 0x1000;
constexpr uint64_t Stack = 0x8000, StackSize = 0x2000, StackEnd = Stack + StackSize;
constexpr uint64_t Unmapped = 0x5000;

// Addresses right after instructions placed in the code below.
constexpr uint64_t AfterCallRel32 = 0x1105;     // e8 rel32          at 0x1100, to 0x1000
constexpr uint64_t AfterCallNowhere = 0x1185;   // e8 rel32          at 0x1180, to 0x40303195: unmapped
constexpr uint64_t AfterCallRax = 0x1202;       // ff d0 (call rax)  at 0x1200
constexpr uint64_t AfterCallRipMem = 0x1306;    // ff 15 disp32      at 0x1300
constexpr uint64_t AfterCallRspDisp = 0x1404;   // ff 54 24 08 (call [rsp+8]) at 0x1400
constexpr uint64_t AfterJmpRax = 0x1502;        // ff e0 (jmp rax)   at 0x1500: no call
constexpr uint64_t NotAfterCall = 0x1600;       // int3 padding only
constexpr uint64_t DataAfterCallBytes = 0x2105; // e8 rel32 bytes in non-executable data
constexpr uint64_t JitAfterCall = 0x3105;       // e8 rel32 in executable memory of no module

void put(std::vector<uint8_t> &bytes, uint64_t at, std::vector<uint8_t> insn) {
  std::copy(insn.begin(), insn.end(), bytes.begin() + at);
}

struct Fixture {
  explicit Fixture(Arch arch = Arch::X86_64, OS os = OS::Linux) : arch(arch), os(os) {
    put(code, 0x100, {0xe8, 0xfb, 0xfe, 0xff, 0xff});
    put(code, 0x180, {0xe8, 0x10, 0x20, 0x30, 0x40});
    put(code, 0x200, {0xff, 0xd0});
    put(code, 0x300, {0xff, 0x15, 0x01, 0x02, 0x03, 0x04});
    put(code, 0x400, {0xff, 0x54, 0x24, 0x08});
    put(code, 0x500, {0xff, 0xe0});
    put(data, 0x100, {0xe8, 0x10, 0x20, 0x30, 0x40});
    put(jit, 0x100, {0xe8, 0x10, 0x20, 0x30, 0x40});
  }

  // A little-endian word of the target's pointer size at Stack + offset.
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, pointerSize(arch)); }

  // The target as the test has set it up; built on first use.
  const Target &target() {
    if (built) return *built;
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> memory = {
        {CodeStart, code}, {DataStart, data}, {JitStart, jit}, {Stack, stack}};
    memory.insert(memory.end(), extraMemory.begin(), extraMemory.end());
    built = makeTarget(arch, os, makeMemory(std::move(memory)),
                       {{CodeStart, CodeStart + PageSize, true, false, true},
                        {DataStart, DataStart + PageSize, true, false, false},
                        {JitStart, JitStart + PageSize, true, false, true},
                        {Stack, StackEnd, true, true, false}},
                       {makeModule("app", CodeStart, 2 * PageSize)}); // text and data
    return *built;
  }

  // A frame as the walker makes one, with callee-saved and volatile registers
  // set to values a test can recognize.
  Frame frame(uint64_t ip, uint64_t sp, std::optional<uint64_t> fp, FrameTrust trust = FrameTrust::Context) {
    std::vector<unsigned> recognised;
    if (arch == Arch::X86_64) recognised = {Rax, Rcx, Rdx, Rbx, Rsi, Rdi, R12, R15};
    Frame f = makeFrame(target(), ip, sp, trust, recognised, arch);
    if (fp) f.regs.set(f.regs.fpRegister(), *fp);
    return f;
  }

  Arch arch;
  OS os;
  std::vector<uint8_t> code = std::vector<uint8_t>(PageSize, 0xcc); // int3
  std::vector<uint8_t> data = std::vector<uint8_t>(PageSize, 0);
  std::vector<uint8_t> jit = std::vector<uint8_t>(PageSize, 0xcc);
  std::vector<uint8_t> stack = std::vector<uint8_t>(StackSize, 0);
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> extraMemory;
  std::unique_ptr<Target> built;
};

} // namespace

// ---------------------------------------------------------------------------
// isPlausibleReturnAddress: what the scan and the bad-call unwinders accept.

TEST_CASE("a plausible return address follows a call in a module's executable memory", "[fallback][scan]") {
  Fixture fx;
  const Target &t = fx.target();
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallRel32));
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallRax));
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallRipMem));
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallRspDisp));
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, AfterJmpRax));        // jmp, not call
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallNowhere));   // a call to no code
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, NotAfterCall));       // int3s
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, AfterCallRel32 + 1)); // one byte off
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, DataAfterCallBytes)); // not executable
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, JitAfterCall));       // no module
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, Unmapped));
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, Stack + 0x10));
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(t, 0));
}

TEST_CASE("a module without a file or regions counts as code; its words still need a call before them",
          "[fallback][scan]") {
  Fixture fx;
  fx.target();
  fx.built->regions.clear(); // no mapping information and no module file
  CHECK(fx.built->isExecutable(NotAfterCall));
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(*fx.built, AfterCallRel32));
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(*fx.built, NotAfterCall));
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(*fx.built, JitAfterCall)); // still no module
}

// A call at the very start of readable code: only the call's own bytes are
// readable before its return address. x86FollowsCall reads 7 bytes before
// the return address whatever the call's length, so it cannot see this call.
TEST_CASE("a call in the first bytes of readable code is still a call", "[fallback][scan]") {
  Fixture fx;
  constexpr uint64_t Start = 0x6000;
  fx.extraMemory.push_back({Start, {0xff, 0xd0, 0xcc, 0xcc, 0xe8, 0xf7, 0xff, 0xff, 0xff, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}});
  fx.target();
  fx.built->regions.push_back({Start, Start + 0x10, true, false, true});
  fx.built->modules.push_back(makeModule("lib", Start, 0x10));
  fx.built->sortModules();
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(*fx.built, Start + 9)); // control: 7 bytes are readable
  CHECK(StackScanUnwinder::isPlausibleReturnAddress(*fx.built, Start + 2)); // call rax at the region's start
}

// ---------------------------------------------------------------------------
// BadCallUnwinder

TEST_CASE("bad call: the caller returns to [sp] with only callee-saved registers", "[fallback][badcall]") {
  // After call rel32, call rax, call [rip+disp32]; ...
  const uint64_t returnAddress = GENERATE(AfterCallRel32, AfterCallRax, AfterCallRipMem);
  // ... having called through a null pointer, into unmapped memory, a module's data, the stack.
  const uint64_t ip = GENERATE(uint64_t(0), Unmapped, DataStart + 0x40, Stack + 0x100);
  CAPTURE(returnAddress, ip);
  Fixture fx;
  fx.word(0x40, returnAddress);
  fx.word(0x48, AfterCallRspDisp); // the next word is not taken instead

  BadCallUnwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::Scan);
  UnwindResult r = unwinder.unwind(fx.frame(ip, Stack + 0x40, Stack + 0x100), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == returnAddress);
  CHECK(r.caller.sp() == Stack + 0x48);
  CHECK(r.caller.fp() == Stack + 0x100); // rbp: the callee never ran
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(R12) == 0x1212u);
  CHECK(r.caller.get(R15) == 0x1515u);
  // Volatile registers, and rsi/rdi under System V, are unknown.
  CHECK(known(r.caller) == std::vector<unsigned>{Rbx, Rbp, Rsp, R12, R15, Rip});
  CHECK_FALSE(r.callerIpIsExact);
  CHECK_FALSE(r.trust);
}

TEST_CASE("bad call on Windows also keeps rsi and rdi", "[fallback][badcall]") {
  Fixture fx(Arch::X86_64, OS::Windows);
  fx.word(0x40, AfterCallRax);
  UnwindResult r = BadCallUnwinder().unwind(fx.frame(0, Stack + 0x40, Stack + 0x100), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.get(Rsi) == 0x5151u);
  CHECK(r.caller.get(Rdi) == 0xd1d1u);
  CHECK_FALSE(r.caller.isKnown(Rax));
  CHECK(r.caller.pc() == AfterCallRax);
}

TEST_CASE("bad call: what it refuses", "[fallback][badcall]") {
  Fixture fx;
  BadCallUnwinder unwinder;
  fx.word(0x40, AfterCallRel32);
  const uint64_t sp = Stack + 0x40;
  // The control: this frame unwinds.
  REQUIRE(unwinder.unwind(fx.frame(0, sp, std::nullopt), fx.target()).status == Status::Caller);

  SECTION("an instruction pointer in a module's code") {
    CHECK(unwinder.unwind(fx.frame(CodeStart + 0x10, sp, std::nullopt), fx.target()).status == Status::NoInfo);
  }
  SECTION("an instruction pointer in executable memory outside every module") {
    CHECK(unwinder.unwind(fx.frame(JitStart + 0x10, sp, std::nullopt), fx.target()).status == Status::NoInfo);
  }
  SECTION("a frame that is not the thread's context") {
    for (FrameTrust trust : {FrameTrust::Cfi, FrameTrust::FramePointer, FrameTrust::Scan, FrameTrust::Manual})
      CHECK(unwinder.unwind(fx.frame(0, sp, std::nullopt, trust), fx.target()).status == Status::NoInfo);
  }
  SECTION("a stack pointer outside the dump") {
    CHECK(unwinder.unwind(fx.frame(0, StackEnd, std::nullopt), fx.target()).status == Status::NoInfo);
    CHECK(unwinder.unwind(fx.frame(0, StackEnd - 4, std::nullopt), fx.target()).status == Status::NoInfo);
  }
}

TEST_CASE("bad call: the word at sp must be a return address", "[fallback][badcall]") {
  Fixture fx;
  uint64_t value = 0;
  SECTION("not after a call") { value = NotAfterCall; }
  SECTION("after a jmp") { value = AfterJmpRax; }
  SECTION("after call bytes in data") { value = DataAfterCallBytes; }
  SECTION("after a call outside every module") { value = JitAfterCall; }
  SECTION("a stack address") { value = Stack + 0x100; }
  SECTION("zero") { value = 0; }
  fx.word(0x40, value);
  fx.word(0x48, AfterCallRel32); // a scan would find this; bad call must not
  CHECK(BadCallUnwinder().unwind(fx.frame(0, Stack + 0x40, std::nullopt), fx.target()).status == Status::NoInfo);
}

TEST_CASE("bad call on arm64: the return address is in the link register, the stack pointer unchanged",
          "[fallback][badcall][arm64]") {
  constexpr unsigned X19 = 19, X29 = 29, X30 = 30, Sp = 31, Pc = 32;
  const uint64_t returnAddress = GENERATE(uint64_t(0x1704), uint64_t(0x1804), uint64_t(0x0012000000001704));
  constexpr uint64_t AfterBl = 0x1704;
  Fixture fx(Arch::Arm64);
  put(fx.code, 0x700, {0x10, 0x00, 0x00, 0x94}); // bl
  put(fx.code, 0x800, {0x00, 0x02, 0x3f, 0xd6}); // blr x16
  fx.word(0x40, AfterBl);                         // on the stack: not where arm64 keeps it
  CAPTURE(returnAddress); // after bl, after blr, after bl with a pointer-authentication signature
  Frame frame = fx.frame(0, Stack + 0x40, Stack + 0x100);
  frame.regs.set(X30, returnAddress);
  frame.regs.set(X19, 0x1919);
  UnwindResult r = BadCallUnwinder().unwind(frame, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == returnAddress); // as x30 holds it: the walker strips the signature (codeAddress)
  CHECK(r.caller.sp() == Stack + 0x40);
  CHECK(known(r.caller) == std::vector<unsigned>{X19, X29, Sp, Pc});

  SECTION("x30 not after a call") {
    frame.regs.set(X30, AfterBl + 4);
    CHECK(BadCallUnwinder().unwind(frame, fx.target()).status == Status::NoInfo);
  }
  SECTION("x30 unknown") {
    frame.regs.forget(X30);
    CHECK(BadCallUnwinder().unwind(frame, fx.target()).status == Status::NoInfo);
  }
}

// ---------------------------------------------------------------------------
// FramePointerUnwinder

TEST_CASE("frame pointer: the caller comes from the frame record at [rbp]", "[fallback][fp]") {
  Fixture fx;
  uint64_t sp = Stack + 0x10, fp = Stack + 0x40;
  SECTION("a frame with locals") {}
  SECTION("rbp equal to rsp (push rbp; mov rbp, rsp; no locals)") { sp = fp; }
  fx.word(0x40, Stack + 0x80); // saved rbp
  fx.word(0x48, AfterCallRax); // return address
  fx.word(0x50, AfterCallRel32);

  FramePointerUnwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::FramePointer);
  UnwindResult r = unwinder.unwind(fx.frame(CodeStart + 0x20, sp, fp), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRax);
  CHECK(r.caller.sp() == Stack + 0x50);
  CHECK(r.caller.fp() == Stack + 0x80);
  // Nothing else is known: the callee may have changed any other register.
  CHECK(known(r.caller) == std::vector<unsigned>{Rbp, Rsp, Rip});
  CHECK_FALSE(r.callerIpIsExact);
  CHECK_FALSE(r.callerSpIsLowerBound); // push rbp at entry: the record tops the frame
  CHECK_FALSE(r.trust);
}

// GCC's stack realignment (i386 main: lea ecx, [esp+4]; and esp, -16; push
// [ecx-4]; push ebp; mov ebp, esp; push ebx; push ecx): the record holds a copy
// of the return address, the original lies past the alignment gap, and ecx,
// saved below the record, is the caller's stack pointer.
TEST_CASE("frame pointer: a realigned frame's caller stack pointer is past the original return address",
          "[fallback][fp]") {
  Arch arch = GENERATE(Arch::X86, Arch::X86_64);
  Fixture fx(arch);
  uint64_t size = pointerSize(arch), fp = Stack + 0x40, gap = 2 * size;
  uint64_t original = fp + 2 * size + gap, callerSp = original + size;
  fx.word(0x40, Stack + 0x80);               // saved frame pointer
  fx.word(0x40 + size, AfterCallRax);        // the copy
  bool copied = true, saved = true;
  SECTION("both words there") {}
  SECTION("no original past the record") { copied = false; }
  SECTION("no caller's stack pointer saved below the record") { saved = false; }
  if (copied) fx.word(original - Stack, AfterCallRax);
  if (saved) fx.word(0x40 - 2 * size, callerSp); // below a saved callee-saved register
  UnwindResult r = FramePointerUnwinder().unwind(fx.frame(CodeStart + 0x20, Stack + 0x10, fp), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRax);
  CHECK(r.caller.fp() == Stack + 0x80);
  CHECK(r.caller.sp() == (copied && saved ? callerSp : fp + 2 * size));
}

TEST_CASE("frame pointer on arm64: an interrupted frame returns to lr first, when it follows a call",
          "[fallback][fp][arm64]") {
  constexpr unsigned X29 = 29, X30 = 30;
  Fixture fx(Arch::Arm64);
  put(fx.code, 0x700, {0x10, 0x00, 0x00, 0x94}); // bl
  put(fx.code, 0x800, {0x10, 0x00, 0x00, 0x94}); // bl
  fx.word(0x40, Stack + 0x80);                    // the caller's frame record:
  fx.word(0x48, 0x1804);                          // the caller's own return address
  Frame leaf = fx.frame(CodeStart + 0x20, Stack + 0x10, Stack + 0x40);
  leaf.regs.set(X30, 0x1704);
  FramePointerUnwinder unwinder;
  UnwindResult r = unwinder.unwind(leaf, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == 0x1704u);
  CHECK(r.caller.sp() == Stack + 0x10); // a leaf moved nothing
  CHECK(r.caller.get(X29) == Stack + 0x40);

  CHECK_FALSE(r.callerSpIsLowerBound);

  SECTION("a caller frame follows the record instead, its stack pointer only bounded") {
    leaf.ipIsExact = false;
    leaf.trust = FrameTrust::Cfi;
    UnwindResult caller = unwinder.unwind(leaf, fx.target());
    REQUIRE(caller.status == Status::Caller);
    CHECK(caller.caller.sp() == Stack + 0x50);
    // GCC puts an arm64 record at the bottom of its frame, clang at the top.
    CHECK(caller.callerSpIsLowerBound);
  }
  SECTION("lr not after a call: the record") {
    leaf.regs.set(X30, NotAfterCall);
    CHECK(unwinder.unwind(leaf, fx.target()).caller.sp() == Stack + 0x50);
  }
}

TEST_CASE("frame pointer on arm64: an interrupted frame that pushed its own record returns through it",
          "[fallback][fp][arm64]") {
  // stp x29, x30, [sp, #-48]!; mov x29, sp; ... svc: the record at sp holds
  // the caller's frame pointer and lr, which still holds the return address.
  constexpr unsigned X29 = 29, X30 = 30;
  Fixture fx(Arch::Arm64);
  put(fx.code, 0x700, {0x10, 0x00, 0x00, 0x94}); // bl
  fx.word(0x10, Stack + 0x60);                    // its own record: the caller's x29
  fx.word(0x18, 0x1704);                          // and lr
  Frame blocked = fx.frame(CodeStart + 0x20, Stack + 0x10, Stack + 0x10);
  blocked.regs.set(X30, 0x1704);
  UnwindResult r = FramePointerUnwinder().unwind(blocked, fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == 0x1704u);
  CHECK(r.caller.get(X29) == Stack + 0x60); // the caller's, not the callee's own record
  CHECK(r.caller.sp() == Stack + 0x20);     // past the record at least
  CHECK(r.callerSpIsLowerBound);
}

// An arm64 file without unwind tables, its functions named (.text at 0x1000):
//   l3     0x1000: nop; bl l4; ret                      (l4's return address: 0x1008)
//   l4     0x1020: stp x29, x30, [sp, #-32]!; mov x29, sp; bl strlen; bl l4; str w0, [x1]; ldp x29, x30, [sp], #32; ret
//   strlen 0x1060: ret                                  (its return into l4: 0x102c; l4's own: 0x1030)
const char *const kArm64NoCfiText =
    "1f2003d507000094c0035fd61f2003d51f2003d51f2003d51f2003d51f2003d5fd7bbea9fd0300910e000094fdffff97200000b9fd7bc2a8c0035fd61f2003d51f2003d51f2003d51f2003d51f2003d51f2003d51f2003d51f2003d51f2003d5c0035fd6";
const char *const kArm64NoCfiSymbols =
    "  - {Name: l3, Type: STT_FUNC, Section: .text, Value: 0x1000, Size: 0xc, Binding: STB_GLOBAL}\n"
    "  - {Name: l4, Type: STT_FUNC, Section: .text, Value: 0x1020, Size: 0x1c, Binding: STB_GLOBAL}\n"
    "  - {Name: strlen, Type: STT_FUNC, Section: .text, Value: 0x1060, Size: 4, Binding: STB_GLOBAL}\n";

TEST_CASE("frame pointer on arm64: lr that returns into the interrupted function itself is stale, its record leads on",
          "[fallback][fp][arm64]") {
  // An oracle sweep's program without CFI: l4 had called strlen since its
  // prolog, so lr was strlen's return into l4, taken as l4's caller.
  constexpr unsigned X29 = 29, X30 = 30;
  // Stripped (busybox for arm64), the same by where the call before lr went:
  // strlen returns without reaching l4's store, so lr after `bl strlen` is stale.
  std::string symbols = GENERATE(std::string(kArm64NoCfiSymbols), std::string());
  INFO((symbols.empty() ? "stripped" : "named"));
  constexpr uint64_t Base = 0x5500000000, ReturnIntoL3 = Base + 0x1008, StrlenIntoL4 = Base + 0x102c,
                     L4IntoL4 = Base + 0x1030;
  std::vector<uint8_t> stack(0x100, 0);
  std::memcpy(&stack[0x10], &StackEnd, 8); // l4's record: l3's frame pointer
  std::memcpy(&stack[0x18], &ReturnIntoL3, 8);
  auto target = makeTarget(Arch::Arm64, OS::Linux, makeMemory({{Stack, stack}}), {},
                           {makeModule("prog", Base + 0x1000, 0x1000,
                                       textImage("EM_AARCH64", kArm64NoCfiText, symbols, "prog"))});
  auto interrupted = [&](uint64_t pc, uint64_t lr) {
    Frame frame = makeFrame(*target, pc, Stack + 0x10, FrameTrust::Context, {}, Arch::Arm64);
    frame.regs.set(X29, Stack + 0x10);
    frame.regs.set(X30, lr);
    return FramePointerUnwinder().unwind(frame, *target);
  };
  UnwindResult past = interrupted(Base + 0x1030, StrlenIntoL4); // the store, after strlen returned
  REQUIRE(past.status == Status::Caller);
  CHECK(past.caller.pc() == ReturnIntoL3);
  // At its first instruction (a recursive call's callee, its stack overflowed):
  // lr, past the pc and after `bl l4`, is the return into its caller.
  UnwindResult entry = interrupted(Base + 0x1020, L4IntoL4);
  REQUIRE(entry.status == Status::Caller);
  CHECK(entry.caller.pc() == L4IntoL4);
}

TEST_CASE("frame pointer on ARM: lr equal to a context's pc with the Thumb bit is no caller",
          "[fallback][fp][arm]") {
  // Breakpad's ARM microdumps record the writer's own context, lr = pc, both
  // with the Thumb bit: the same code, not a frame that called it.
  Fixture fx(Arch::Arm);
  constexpr unsigned Lr = 14;
  put(fx.code, 0x700, {0x00, 0xf0, 0x00, 0xf8}); // Thumb bl
  Frame context = fx.frame(0x1704 | 1, Stack + 0x10, std::nullopt);
  context.regs.set(ArmCpsr, ArmThumbBit);
  context.regs.set(Lr, 0x1704 | 1);
  FramePointerUnwinder unwinder;
  CHECK(unwinder.unwind(context, fx.target()).status != Status::Caller);
  SECTION("lr elsewhere after the call: the caller") {
    context.ip = (CodeStart + 0x20) | 1;
    UnwindResult r = unwinder.unwind(context, fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == (0x1704u | 1));
  }
}

TEST_CASE("frame pointer: any executable return address will do, and any frame", "[fallback][fp]") {
  Fixture fx;
  uint64_t returnAddress = 0;
  SECTION("JIT code outside every module") { returnAddress = JitAfterCall; }
  SECTION("module code not after a call") { returnAddress = NotAfterCall; }
  fx.word(0x40, Stack + 0x80);
  fx.word(0x48, returnAddress);
  for (FrameTrust trust : {FrameTrust::Context, FrameTrust::Cfi, FrameTrust::FramePointer, FrameTrust::Scan}) {
    UnwindResult r = FramePointerUnwinder().unwind(fx.frame(CodeStart + 0x20, Stack, Stack + 0x40, trust), fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == returnAddress);
  }
}

TEST_CASE("frame pointer: what it refuses", "[fallback][fp]") {
  Fixture fx;
  FramePointerUnwinder unwinder;
  // Valid frame records at Stack+0x20, +0x40 and (misaligned) +0x64.
  fx.word(0x20, Stack + 0x80);
  fx.word(0x28, AfterCallRel32);
  fx.word(0x40, Stack + 0x80);
  fx.word(0x48, AfterCallRax);
  fx.word(0x64, Stack + 0x80);
  fx.word(0x6c, AfterCallRipMem);
  const uint64_t ip = CodeStart + 0x20, sp = Stack + 0x30;
  // The control: this frame unwinds.
  REQUIRE(unwinder.unwind(fx.frame(ip, sp, Stack + 0x40), fx.target()).status == Status::Caller);

  SECTION("an unknown frame pointer") {
    CHECK(unwinder.unwind(fx.frame(ip, sp, std::nullopt), fx.target()).status == Status::NoInfo);
  }
  SECTION("a frame pointer below the stack pointer") {
    CHECK(unwinder.unwind(fx.frame(ip, sp, Stack + 0x20), fx.target()).status == Status::NoInfo);
    CHECK(unwinder.unwind(fx.frame(ip, sp, sp - 8), fx.target()).status == Status::NoInfo);
  }
  SECTION("a misaligned frame pointer") {
    CHECK(unwinder.unwind(fx.frame(ip, sp, Stack + 0x64), fx.target()).status == Status::NoInfo);
  }
  SECTION("a frame record outside the dump") {
    CHECK(unwinder.unwind(fx.frame(ip, sp, StackEnd - 8), fx.target()).status == Status::NoInfo); // ra unreadable
    CHECK(unwinder.unwind(fx.frame(ip, sp, StackEnd), fx.target()).status == Status::NoInfo);
    CHECK(unwinder.unwind(fx.frame(ip, sp, 0x7fff0000), fx.target()).status == Status::NoInfo);
  }
}

TEST_CASE("frame pointer: the record must lie on the stack that holds sp, or the run of writable mappings it "
          "is in", "[fallback][fp]") {
  // A JIT (Erlang's) keeps rbp for its own data: a record-like pair of words
  // in a heap mapping above the stack is no frame of this thread's.
  constexpr uint64_t Heap = 0xc000, HeapEnd = Heap + PageSize;
  Fixture fx;
  std::vector<uint8_t> heap(PageSize, 0);
  std::memcpy(&heap[0x40], &Heap, 8);
  std::memcpy(&heap[0x48], &AfterCallRax, 8);
  fx.extraMemory.push_back({Heap, heap});
  fx.target();
  fx.built->regions.push_back({Heap, HeapEnd, true, true, false});
  FramePointerUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(CodeStart + 0x20, Stack + 0x10, Heap + 0x40), fx.target());
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail == "the frame pointer does not point into the stack");
  SECTION("the same words on a writable mapping adjacent to the stack's: the same stack, split") {
    Fixture joined;
    joined.extraMemory.push_back({StackEnd, heap});
    joined.target();
    joined.built->regions.push_back({StackEnd, StackEnd + PageSize, true, true, false});
    UnwindResult split = unwinder.unwind(joined.frame(CodeStart + 0x20, Stack + 0x10, StackEnd + 0x40), joined.target());
    REQUIRE(split.status == Status::Caller);
    CHECK(split.caller.pc() == AfterCallRax);
  }
  SECTION("no mapping recorded for the stack: not bounded") {
    fx.built->regions.clear();
    CHECK(unwinder.unwind(fx.frame(CodeStart + 0x20, Stack + 0x10, Heap + 0x40), fx.target()).status == Status::Caller);
  }
}

TEST_CASE("frame pointer: a record whose return address is its module's first byte is none", "[fallback][fp]") {
  // -O2 Thumb code keeps other values in r7: read as a record, {0, load address}.
  Fixture fx;
  fx.word(0x40, 0);
  fx.word(0x48, CodeStart);
  UnwindResult r = FramePointerUnwinder().unwind(fx.frame(CodeStart + 0x20, Stack, Stack + 0x40), fx.target());
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail.find("its module's first byte") != std::string::npos);
  fx.word(0x48, CodeStart + 1); // control
  fx.built.reset();
  CHECK(FramePointerUnwinder().unwind(fx.frame(CodeStart + 0x20, Stack, Stack + 0x40), fx.target()).status ==
        Status::Caller);
}

TEST_CASE("frame pointer: the saved return address must be executable", "[fallback][fp]") {
  Fixture fx;
  uint64_t value = 0;
  SECTION("a module's data") { value = DataAfterCallBytes; }
  SECTION("unmapped memory") { value = Unmapped; }
  SECTION("the stack") { value = Stack + 0x100; }
  fx.word(0x40, Stack + 0x80);
  fx.word(0x48, value);
  CHECK(FramePointerUnwinder().unwind(fx.frame(CodeStart, Stack, Stack + 0x40), fx.target()).status == Status::NoInfo);
}

// Java's interpreter frames, each a record, between the VM's own frames: a
// core converted to a minidump, or a Breakpad dump, does not place them. The
// callee's record returns into JIT code, the JIT frame's record into the
// module, after a call; `change` alters those words, and the target is one
// without mappings unless it says otherwise.
UnwindResult unwindIntoJit(const std::function<void(Fixture &)> &change = {}, bool mapped = false) {
  Fixture fx;
  fx.word(0x40, Stack + 0x80);
  fx.word(0x48, 0x7f0000001005);
  fx.word(0x80, Stack + 0xc0);
  fx.word(0x88, AfterCallRax);
  if (change) change(fx);
  fx.target();
  if (!mapped) fx.built->regions.clear();
  return FramePointerUnwinder().unwind(fx.frame(CodeStart + 0x20, Stack + 0x10, Stack + 0x40), fx.target());
}

TEST_CASE("frame pointer in a dump without mappings: a return address outside every module is taken when the "
          "chain returns into a module", "[fallback][fp]") {
  UnwindResult r = unwindIntoJit();
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == 0x7f0000001005u);
  CHECK(r.caller.fp() == Stack + 0x80);
  CHECK(unwindIntoJit([](Fixture &fx) { // through more JIT frames
          fx.word(0x80, Stack + 0xa0);
          fx.word(0x88, 0x7f0000002005);
          fx.word(0xa0, Stack + 0xc0);
          fx.word(0xa8, AfterCallRax);
        }).status == Status::Caller);

  // Not: the chain ends before a module; the next record lies lower on the
  // stack; the module's return address follows no call; a stack address.
  CHECK(unwindIntoJit([](Fixture &fx) { fx.word(0x80, 0), fx.word(0x88, 0); }).status == Status::NoInfo);
  CHECK(unwindIntoJit([](Fixture &fx) {
          fx.word(0x40, Stack + 0x20);
          fx.word(0x20, Stack + 0xc0);
          fx.word(0x28, AfterCallRax);
        }).status == Status::NoInfo);
  CHECK(unwindIntoJit([](Fixture &fx) { fx.word(0x88, NotAfterCall); }).status == Status::NoInfo);
  CHECK(unwindIntoJit([](Fixture &fx) { fx.word(0x48, Stack + 0x100); }).status == Status::NoInfo);
  // Nor where the dump records mappings: JIT code there is mapped.
  CHECK(unwindIntoJit({}, /*mapped=*/true).status == Status::NoInfo);
}

TEST_CASE("frame pointer: a null saved return address ends the chain, not the stack", "[fallback][fp]") {
  // Code without frame pointers can leave rbp at a record of zeros: the scan decides.
  Fixture fx;
  fx.word(0x40, 0);
  fx.word(0x48, 0);
  UnwindResult r = FramePointerUnwinder().unwind(fx.frame(CodeStart, Stack, Stack + 0x40), fx.target());
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail == "the frame-pointer chain ends");
}

TEST_CASE("frame pointer on 32-bit x86: 4-byte records at [ebp]", "[fallback][fp]") {
  Fixture fx(Arch::X86);
  constexpr unsigned Esp = 4, Ebp = 5, Eip = 8;
  fx.word(0x40, Stack + 0x80);
  fx.word(0x44, AfterCallRax);
  fx.word(0x48, AfterCallRel32); // where a 64-bit reading would find the return address
  FramePointerUnwinder unwinder;
  UnwindResult r = unwinder.unwind(fx.frame(CodeStart, Stack + 0x10, Stack + 0x40), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRax);
  CHECK(r.caller.sp() == Stack + 0x48);
  CHECK(r.caller.fp() == Stack + 0x80);
  CHECK(known(r.caller) == std::vector<unsigned>{Esp, Ebp, Eip});
  // 4-byte aligned is aligned enough; 2-byte is not.
  fx.built.reset(); // rebuilt with two more words
  fx.word(0x54, Stack + 0x80);
  fx.word(0x58, AfterCallRax);
  CHECK(unwinder.unwind(fx.frame(CodeStart, Stack + 0x10, Stack + 0x54), fx.target()).status == Status::Caller);
  CHECK(unwinder.unwind(fx.frame(CodeStart, Stack + 0x10, Stack + 0x52), fx.target()).status == Status::NoInfo);
}

TEST_CASE("frame pointer on ARM: r7 in Thumb code, r11 in ARM code and on Windows, 4-byte records", "[fallback][fp]") {
  // A Thumb frame record (clang and GCC: push {r7, lr}; mov r7, sp) at 0x40:
  // the saved r7, then lr with the Thumb bit; an ARM one (push {r11, lr};
  // mov r11, sp) at 0x60. Each unwinds by its own register only.
  Fixture fx(Arch::Arm);
  constexpr unsigned R7 = 7, R11 = 11, Sp = 13, Pc = 15;
  fx.word(0x40, Stack + 0x80);
  fx.word(0x44, AfterCallRax | 1);
  fx.word(0x60, Stack + 0xa0);
  fx.word(0x64, AfterCallRel32);
  FramePointerUnwinder unwinder;
  auto frameWith = [&](bool thumb) {
    Frame f = fx.frame(CodeStart, Stack + 0x10, std::nullopt, FrameTrust::Cfi);
    f.regs.set(ArmCpsr, thumb ? ArmThumbBit : 0);
    f.regs.set(R7, Stack + 0x40);
    f.regs.set(R11, Stack + 0x60);
    return f;
  };
  UnwindResult thumb = unwinder.unwind(frameWith(true), fx.target());
  REQUIRE(thumb.status == Status::Caller);
  CHECK(thumb.caller.pc() == (AfterCallRax | 1)); // the walker reads the caller's instruction set from bit 0
  CHECK(thumb.caller.sp() == Stack + 0x48);
  CHECK(thumb.caller.get(R7) == Stack + 0x80);
  CHECK(known(thumb.caller) == std::vector<unsigned>{R7, Sp, Pc});
  UnwindResult arm = unwinder.unwind(frameWith(false), fx.target());
  REQUIRE(arm.status == Status::Caller);
  CHECK(arm.caller.pc() == AfterCallRel32);
  CHECK(arm.caller.sp() == Stack + 0x68);
  CHECK(arm.caller.get(R11) == Stack + 0xa0);
  CHECK(known(arm.caller) == std::vector<unsigned>{R11, Sp, Pc});
  SECTION("Windows on ARM: Thumb-2 code keeps its records at r11") {
    Fixture windows(Arch::Arm, OS::Windows);
    windows.word(0x40, Stack + 0x80);
    windows.word(0x44, AfterCallRax | 1);
    windows.word(0x60, Stack + 0xa0);
    windows.word(0x64, AfterCallRel32 | 1);
    Frame f = windows.frame(CodeStart, Stack + 0x10, std::nullopt, FrameTrust::Cfi);
    f.regs.set(ArmCpsr, ArmThumbBit);
    f.regs.set(R7, Stack + 0x40);
    f.regs.set(R11, Stack + 0x60);
    UnwindResult result = unwinder.unwind(f, windows.target());
    REQUIRE(result.status == Status::Caller);
    CHECK(result.caller.pc() == (AfterCallRel32 | 1));
    CHECK(result.caller.sp() == Stack + 0x68);
    CHECK(known(result.caller) == std::vector<unsigned>{R11, Sp, Pc});
  }
}

// ---------------------------------------------------------------------------
// StackScanUnwinder

TEST_CASE("stack scan: the first word from sp up that is a return address", "[fallback][scan]") {
  Fixture fx;
  fx.word(0x18, AfterCallRel32); // below sp: never looked at
  fx.word(0x20, 0);              // sp
  fx.word(0x28, Stack + 0x100);
  fx.word(0x30, NotAfterCall);
  fx.word(0x38, AfterJmpRax);
  fx.word(0x40, JitAfterCall);
  fx.word(0x48, DataAfterCallBytes);
  fx.word(0x50, Unmapped);
  fx.word(0x58, AfterCallRel32 + 1);
  fx.word(0x60, AfterCallRipMem); // the first plausible one
  fx.word(0x68, AfterCallRax);

  StackScanUnwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::Scan);
  UnwindResult r = unwinder.unwind(fx.frame(CodeStart + 0x20, Stack + 0x20, Stack + 0x200), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRipMem);
  CHECK(r.caller.sp() == Stack + 0x68);
  // Not even rbp or a callee-saved register is carried over.
  CHECK(known(r.caller) == std::vector<unsigned>{Rsp, Rip});
  CHECK_FALSE(r.callerIpIsExact);
  CHECK_FALSE(r.trust);
}

// A module known only by its Breakpad symbol file: no file, and no code bytes
// in the dump to show a call. dump_syms's file of an ELF program: _init and
// _fini are PUBLIC symbols without CFI; past _fini lies the data segment.
TEST_CASE("stack scan without code bytes: code a symbol file describes, not a PUBLIC symbol's reach nor a "
          "function's own address", "[fallback][scan]") {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy("MODULE Linux x86_64 00 app\n"
                                                                            "PUBLIC 1000 0 _init\n"
                                                                            "FUNC 1060 40 0 main\n"
                                                                            "FUNC 10a0 40 0 worker\n"
                                                                            "PUBLIC 11bc 0 _fini\n"
                                                                            "STACK CFI INIT 1060 80 .cfa: $rsp 8 + "
                                                                            ".ra: .cfa -8 + ^\n"),
                                        "app.sym");
  REQUIRE(bool(file));
  constexpr uint64_t Base = 0x400000;
  Module module = makeModule("app", Base, 0x10000);
  module.symbolFile = std::move(*file);
  std::vector<uint64_t> words = {
      Base + 0x3dd8, // "_fini+0x2c1c": a pointer into the data segment
      Base + 0x1060, // main's address: its byte before is in _init's reach, in no FUNC or CFI range
      Base + 0x10a0, // worker's address: its byte before ends main, but it starts a function
      Base + 0x1075, // a return address in main
  };
  std::vector<uint8_t> stack(words.size() * 8);
  std::memcpy(stack.data(), words.data(), stack.size());
  auto target = makeTarget(Arch::X86_64, OS::Linux, makeMemory({{Stack, std::move(stack)}}), {}, {std::move(module)});
  UnwindResult r = StackScanUnwinder().unwind(makeFrame(*target, Base + 0x1100, Stack, FrameTrust::Cfi, {}), *target);
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == Base + 0x1075);
  CHECK(r.caller.sp() == Stack + 0x20);
}

// A minidump of Windows x64 without its images: words point into the modules,
// nothing holds their code; the walk ends, and says how many it could not check.
TEST_CASE("stack scan without code bytes: the end of the walk counts the words it could not check",
          "[fallback][scan]") {
  constexpr uint64_t Base = 0x7ff700000000;
  std::vector<uint64_t> words = {Base + 0x1075, 0x1234, Base + 0x2080, Base /* the module's first byte */};
  std::vector<uint8_t> stack(words.size() * 8);
  std::memcpy(stack.data(), words.data(), stack.size());
  auto target = makeTarget(Arch::X86_64, OS::Windows, makeMemory({{Stack, std::move(stack)}}), {},
                           {makeModule("tiny.exe", Base, 0x10000)});
  Frame context = makeFrame(*target, Base + 0x1100, Stack, FrameTrust::Context, {});
  UnwindResult r = StackScanUnwinder().unwind(context, *target);
  CHECK(r.status == Status::NoInfo);
  CHECK(r.detail == "no return address found by scanning the stack: 2 word(s) point into modules whose code neither "
                    "the dump nor a file holds, so nothing shows a call before them");
  CHECK_FALSE(StackScanUnwinder::isPlausibleReturnAddress(*target, Base + 0x1075));
}

// Breakpad's Linux dumps hold the stacks and no code: above __libc_start_main's
// frame (found by main's frame record), _start's return address is the only
// word that points just past the entry point the auxiliary vector records;
// the entry point itself, which a register saved there holds, is no return.
TEST_CASE("stack scan without code bytes: a word just past the entry point is the entry function's call",
          "[fallback][scan]") {
  constexpr uint64_t Base = 0x400000, Entry = Base + 0x1df4;
  auto scan = [&](std::vector<uint64_t> words, FrameTrust trust = FrameTrust::FramePointer) {
    std::vector<uint8_t> stack(words.size() * 8);
    std::memcpy(stack.data(), words.data(), stack.size());
    auto target = makeTarget(Arch::X86_64, OS::Linux, makeMemory({{Stack, std::move(stack)}}), {},
                             {makeModule("driver", Base, 0x17000)});
    target->process.auxv = {{AT_PHDR, Base + 0x40}, {AT_ENTRY, Entry}};
    return StackScanUnwinder().unwind(makeFrame(*target, Base + 0x2000, Stack, trust, {}), *target);
  };
  SECTION("the entry point and a word past the call's reach are passed over") {
    UnwindResult r = scan({Entry, Entry + 0x41, Base + 0x1fcf + 0x100, Entry + 0x29});
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == Entry + 0x29);
    CHECK(r.caller.sp() == Stack + 0x20);
  }
  SECTION("near the frame only, as a symbol file's function: 40 words, from the context frame too") {
    std::vector<uint64_t> words(41, 0);
    words[40] = Entry + 0x29;
    CHECK(scan(words).status == Status::NoInfo);
    CHECK(scan(words, FrameTrust::Context).status == Status::NoInfo);
    words[39] = Entry + 0x29;
    CHECK(scan(words, FrameTrust::Context).status == Status::Caller);
  }
}

// i386 PIC code calls __x86.get_pc_thunk.bx (mov ebx, [esp]; ret), which
// returns at once: the word it leaves is no caller's, but while in the thunk.
TEST_CASE("stack scan on i386: a get-pc thunk's return address is dead", "[fallback][scan]") {
  Fixture fx(Arch::X86);
  put(fx.code, 0x0, {0x8b, 0x1c, 0x24, 0xc3}); // the thunk, which the call at 0x1100 calls
  fx.word(0x20, AfterCallRel32);
  fx.word(0x24, AfterCallRax);
  auto caller = [&](uint64_t ip) {
    return StackScanUnwinder().unwind(fx.frame(ip, Stack + 0x20, std::nullopt), fx.target()).caller.pc();
  };
  CHECK(caller(CodeStart + 0x20) == AfterCallRax);
  CHECK(caller(CodeStart + 3) == AfterCallRel32); // interrupted at the thunk's ret
  fx.code[3] = 0x90;                            // control: not a thunk (no ret)
  fx.built.reset();
  CHECK(caller(CodeStart + 0x20) == AfterCallRel32);
}

TEST_CASE("stack scan: the word at sp itself counts", "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRspDisp);
  fx.word(0x28, AfterCallRax);
  UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRspDisp);
  CHECK(r.caller.sp() == Stack + 0x28);
}

TEST_CASE("stack scan: an interrupted frame's own pc on its stack is a saved copy, not a caller", "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRspDisp); // the pc the context was saved at, as an exception record keeps it
  fx.word(0x28, AfterCallRax);
  UnwindResult interrupted = StackScanUnwinder().unwind(fx.frame(AfterCallRspDisp, Stack + 0x20, std::nullopt),
                                                       fx.target());
  REQUIRE(interrupted.status == Status::Caller);
  CHECK(interrupted.caller.pc() == AfterCallRax);
  // A return address may repeat a caller's (recursion): from a frame found by
  // unwinding, the same word is taken.
  UnwindResult returned = StackScanUnwinder().unwind(
      fx.frame(AfterCallRspDisp, Stack + 0x20, std::nullopt, FrameTrust::Cfi), fx.target());
  REQUIRE(returned.status == Status::Caller);
  CHECK(returned.caller.pc() == AfterCallRspDisp);
}

TEST_CASE("stack scan: the word limit", "[fallback][scan]") {
  Fixture fx;
  const uint64_t sp = Stack + 0x100;
  SECTION("a limit of 4 words finds the 4th and not the 5th") {
    fx.word(0x100 + 3 * 8, AfterCallRax);
    CHECK(StackScanUnwinder(4).unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target()).status == Status::Caller);
    UnwindResult window = StackScanUnwinder(3).unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target());
    CHECK(window.status == Status::NoInfo);
    // The stop reason says the window ended the scan, not the stack.
    CHECK(window.detail == "no return address found in the 3 stack words the scan reads above the frame");
  }
  SECTION("no words at all") {
    fx.word(0x100, AfterCallRax);
    CHECK(StackScanUnwinder(0).unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target()).status == Status::NoInfo);
  }
  SECTION("160 words by default") {
    fx.word(0x100 + 160 * 8, AfterCallRax);
    CHECK(StackScanUnwinder().unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target()).status == Status::NoInfo);
    fx.built.reset();
    fx.word(0x100 + 159 * 8, AfterCallRel32);
    UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.sp() == sp + 160 * 8);
  }
}

TEST_CASE("stack scan: above a frame that made a call, 320 bytes: 40 words, or 80 of a 32-bit stack",
          "[fallback][scan]") {
  Fixture fx(GENERATE(Arch::X86_64, Arch::X86));
  const uint64_t size = pointerSize(fx.arch), words = 320 / size;
  CAPTURE(words);
  const uint64_t sp = Stack + 0x100;
  auto caller = [&] {
    Frame frame = fx.frame(CodeStart + 1, sp, std::nullopt, FrameTrust::Cfi);
    frame.ipIsExact = false; // a return address: its stale words lie farther up
    return frame;
  };
  fx.word(0x100 + words * size, AfterCallRax);
  CHECK(StackScanUnwinder().unwind(caller(), fx.target()).status == Status::NoInfo);
  CHECK(StackScanUnwinder().unwind(fx.frame(CodeStart, sp, std::nullopt), fx.target()).status == Status::Caller);
  fx.built.reset();
  fx.word(0x100 + (words - 1) * size, AfterCallRax);
  UnwindResult r = StackScanUnwinder().unwind(caller(), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.sp() == sp + words * size);
}

TEST_CASE("stack scan: stops at the first unreadable word", "[fallback][scan]") {
  Fixture fx;
  // A readable return address beyond an unreadable word just past the stack.
  std::vector<uint8_t> beyond(8);
  std::memcpy(beyond.data(), &AfterCallRax, 8);
  fx.extraMemory.push_back({StackEnd + 8, beyond});
  StackScanUnwinder unwinder;
  // The control: the word beyond is readable and plausible.
  REQUIRE(unwinder.unwind(fx.frame(CodeStart, StackEnd + 8, std::nullopt), fx.target()).status == Status::Caller);
  CHECK(unwinder.unwind(fx.frame(CodeStart, StackEnd - 0x10, std::nullopt), fx.target()).status == Status::NoInfo);
  CHECK(unwinder.unwind(fx.frame(CodeStart, StackEnd, std::nullopt), fx.target()).status == Status::NoInfo);
  CHECK(unwinder.unwind(fx.frame(CodeStart, 0x7fff0000, std::nullopt), fx.target()).status == Status::NoInfo);
}

namespace {

// Unwind data for the code after the calls at 0x1200 and 0x1300 (as CFI would
// say: the return address at sp + 8, the caller's sp 16 bytes up), or an
// outermost frame, or nothing: what the scan checks its candidates by.
class TableUnwinder : public Unwinder {
public:
  enum class Says { Caller, EndOfStack, Nothing };
  explicit TableUnwinder(Says says = Says::Caller) : says_(says) {}
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override {
    ++asked;
    if (says_ == Says::Nothing || frame.lookupAddress() < 0x1200 || frame.lookupAddress() >= 0x1400)
      return UnwindResult::noInfo("no table entry");
    if (says_ == Says::EndOfStack) return UnwindResult::endOfStack("the outermost frame");
    UnwindResult result;
    result.status = UnwindResult::Status::Caller;
    result.caller = RegisterFile(frame.regs.arch());
    result.caller.setSp(frame.sp + 16);
    result.caller.setPc(target.readPointer(frame.sp + 8, 8).value_or(0));
    return result;
  }
  bool startsFunctionAt(uint64_t address, const Target &) override { return address == functionStart; }
  bool isSignalTrampoline(const Frame &frame, const Target &) override { return frame.ip == trampoline; }
  unsigned asked = 0;
  uint64_t functionStart = 0; // where the table has a function begin
  uint64_t trampoline = 0;    // where it describes a signal trampoline

private:
  Says says_;
};

} // namespace

// Above a frame no unwind data describes, a scan meets copies of return
// addresses that calls made earlier left where other frames now keep their
// values: the candidate's own unwind data, read from there, gives a caller
// that is none (on ARM, above _Unwind_RaiseException: two copies of
// must_not_throw's return address before the true caller).
TEST_CASE("stack scan: a candidate whose unwind data gives a caller that cannot be one is a stale copy",
          "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRax);    // stale: its caller's slot, 0x28 + 8, ...
  fx.word(0x40, AfterCallRipMem); // the caller: its own caller at 0x48 + 8 follows a call
  fx.word(0x50, AfterCallRel32);
  auto scanned = [&](uint64_t staleCallersSlotValue, TableUnwinder::Says says = TableUnwinder::Says::Caller) {
    fx.word(0x30, staleCallersSlotValue);
    fx.built.reset();
    TableUnwinder table(says);
    UnwindResult r = StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&table}).unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt),
                                                              fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(table.asked > 0);
    return *r.caller.pc();
  };
  SECTION("a pointer to data is no return address") { CHECK(scanned(DataStart + 0x10) == AfterCallRipMem); }
  SECTION("code that follows no call is none") { CHECK(scanned(NotAfterCall) == AfterCallRipMem); }
  SECTION("a return address: the candidate stands") { CHECK(scanned(AfterCallRel32) == AfterCallRax); }
  SECTION("a value that points nowhere says nothing (a smashed return address)") {
    CHECK(scanned(Unmapped) == AfterCallRax);
    CHECK(scanned(0x4141414141414141) == AfterCallRax);
  }
  SECTION("a null return address: the outermost frame") { CHECK(scanned(0) == AfterCallRax); }
  SECTION("unwind data that ends the stack there, or says nothing, refutes nothing") {
    CHECK(scanned(DataStart + 0x10, TableUnwinder::Says::EndOfStack) == AfterCallRax);
    CHECK(scanned(DataStart + 0x10, TableUnwinder::Says::Nothing) == AfterCallRax);
  }
  SECTION("without unwind data, as before") {
    fx.word(0x30, DataStart + 0x10);
    CHECK(StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target()).caller.pc() ==
          AfterCallRax);
  }
}

// libgcc's unwinder on ARM leaves a copy of a return address beside the
// original: scanning on from the frame the original gave, the copy is no caller.
TEST_CASE("stack scan: from a frame the scan found, a copy of its own return address is passed over",
          "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRax); // the copy, right above the frame's own slot
  fx.word(0x30, AfterCallRel32);
  auto caller = [&](FrameTrust trust) {
    Frame frame = fx.frame(AfterCallRax, Stack + 0x20, std::nullopt, trust);
    frame.ipIsExact = false; // a return address
    return StackScanUnwinder().unwind(frame, fx.target()).caller.pc();
  };
  CHECK(caller(FrameTrust::Scan) == AfterCallRel32);
  CHECK(caller(FrameTrust::Cfi) == AfterCallRax); // a recursion, by what unwind data found: the scan takes it
}

// A stale copy's own caller may look right (a return address a call of the
// same moment left beside it, as printf's frames below a wait in Wine's
// dumps): the unwind data is followed on, and a caller further up that
// cannot be one refutes the candidate all the same.
TEST_CASE("stack scan: a candidate is refuted by a caller its unwind data finds further up", "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRax);     // stale
  fx.word(0x30, AfterCallRipMem);  // its caller by the table: a return address, stale as well
  fx.word(0x40, DataStart + 0x10); // that one's caller: a pointer to data
  fx.word(0x50, AfterCallRel32);   // the true caller (code the table does not describe)
  TableUnwinder table;
  UnwindResult r = StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&table})
                       .unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRel32);
  CHECK(r.caller.sp() == Stack + 0x58);
}

// A signal handler's return address is the trampoline the kernel pushed, which
// follows no call: a chain of callers that reaches it confirms the candidate
// (i386's vDSO __kernel_sigreturn, above a handler blocked in libc).
TEST_CASE("stack scan: a candidate whose unwind data reaches a signal trampoline stands", "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRax);    // the handler's caller
  fx.word(0x30, AfterCallRipMem); // its caller by the table: the handler
  fx.word(0x40, NotAfterCall);    // the handler's return address: the trampoline
  fx.word(0x50, AfterCallRel32);
  TableUnwinder table;
  table.trampoline = NotAfterCall;
  UnwindResult r = StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&table})
                       .unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRax);
  table.trampoline = 0; // control: code after no call refutes it
  fx.built.reset();
  CHECK(StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&table})
            .unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target())
            .caller.pc() == AfterCallRel32);
}

// A function's first byte follows a call only when the function before ends
// with a call that never returns; a word equal to it is mostly a pointer to the
// function (main's, kept by __libc_start_main). Taken when its unwind data
// leads on to a return address; else the scan goes on.
TEST_CASE("stack scan: a candidate at a function's first byte must be confirmed by its unwind data",
          "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRax);    // where the table has a function begin
  fx.word(0x40, AfterCallRipMem); // an ordinary return address
  fx.word(0x50, AfterCallRel32);
  auto scanned = [&](uint64_t callersSlotValue, TableUnwinder::Says says = TableUnwinder::Says::Caller) {
    fx.word(0x30, callersSlotValue);
    fx.built.reset();
    TableUnwinder table(says);
    table.functionStart = AfterCallRax;
    UnwindResult r = StackScanUnwinder(StackScanUnwinder::ContextScanWords, {&table}).unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt),
                                                              fx.target());
    REQUIRE(r.status == Status::Caller);
    return *r.caller.pc();
  };
  SECTION("leading on to a return address: a call that never returned, taken") {
    CHECK(scanned(AfterCallRel32) == AfterCallRax);
  }
  SECTION("leading on to a value that points nowhere, or to none: the function's address, passed over") {
    CHECK(scanned(0x4141414141414141) == AfterCallRipMem);
    CHECK(scanned(0) == AfterCallRipMem);
  }
  SECTION("without unwind data for its call, passed over") {
    CHECK(scanned(0, TableUnwinder::Says::Nothing) == AfterCallRipMem);
  }
}

// The code before the entry point may end with a call that never returns (a
// cold fragment's call to __assert_fail, in linux_inside_module_exe_region1.dmp):
// a word equal to the entry point is a function's first byte after a call,
// passed over unless unwind data confirms it, as above.
TEST_CASE("stack scan: the entry point after a call is the entry function's address, not a return",
          "[fallback][scan]") {
  Fixture fx;
  fx.word(0x20, AfterCallRel32); // the entry point: code that follows a call
  fx.word(0x28, AfterCallRax);
  fx.target();
  SECTION("with the auxiliary vector's entry point there, passed over") {
    fx.built->process.auxv = {{AT_ENTRY, AfterCallRel32}};
    UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == AfterCallRax);
  }
  SECTION("elsewhere, taken") {
    fx.built->process.auxv = {{AT_ENTRY, CodeStart}};
    UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == AfterCallRel32);
  }
}

TEST_CASE("stack scan on 32-bit x86 reads 4-byte words", "[fallback][scan]") {
  Fixture fx(Arch::X86);
  fx.word(0x20, 0);
  fx.word(0x24, NotAfterCall);
  fx.word(0x28, AfterCallRax);
  UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, std::nullopt), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRax);
  CHECK(r.caller.sp() == Stack + 0x2c);
}

// The frames a scan passes over (a library without its file, say) preserved
// their caller's frame pointer, which the caller's own CFI may need (-O0 code:
// CFA = ebp + 8): in the register, or pushed somewhere below the return address.
// The caller's record lies above its stack pointer, 0x44 here: [0x60] the saved
// frame pointer, [0x64] a return address.
TEST_CASE("stack scan on x86: the caller's frame pointer, as the frames passed over preserved it",
          "[fallback][scan]") {
  Fixture fx(Arch::X86);
  constexpr unsigned Ebp = 5;
  fx.word(0x40, AfterCallRel32); // the return address the scan finds
  fx.word(0x60, Stack + 0x100);
  fx.word(0x64, AfterCallRax);
  fx.word(0x80, 0); // another record, lower in the stack than the word that points at it
  fx.word(0x84, AfterCallRax);
  auto callerFp = [&](uint64_t calleeFp) {
    UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, calleeFp), fx.target());
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == AfterCallRel32);
    return r.caller.get(Ebp);
  };
  SECTION("left in the register") { CHECK(callerFp(Stack + 0x60) == Stack + 0x60); }
  SECTION("pushed: the word nearest the return address that points at a record above the caller's sp") {
    fx.word(0x24, Stack + 0x80);
    fx.word(0x30, Stack + 0x40); // the return address's slot: below the caller's sp
    fx.word(0x34, Stack + 0x60);
    fx.word(0x38, Stack + 0x68); // no record there
    CHECK(callerFp(Stack + 0x30) == Stack + 0x60);
  }
  SECTION("not found: unknown, as before") {
    fx.word(0x30, Stack + 0x10); // below the caller's stack
    fx.word(0x34, Stack + 0x62); // misaligned
    CHECK_FALSE(callerFp(Stack + 0x30));
  }
  SECTION("a record's return address that follows no call is none") {
    fx.word(0x64, NotAfterCall);
    fx.word(0x34, Stack + 0x60);
    CHECK_FALSE(callerFp(Stack + 0x60));
  }
}

TEST_CASE("stack scan on Windows x64: no frame pointer taken from the stack (its ABI keeps no chain)",
          "[fallback][scan]") {
  Fixture fx(Arch::X86_64, OS::Windows);
  fx.word(0x40, AfterCallRel32);
  fx.word(0x60, Stack + 0x100); // what would be a record above the caller's sp, which rbp points at
  fx.word(0x68, AfterCallRax);
  UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, Stack + 0x60), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterCallRel32);
  CHECK_FALSE(r.caller.get(Rbp));
  fx.os = OS::Linux; // the same stack on Linux: the record is taken
  fx.built.reset();
  CHECK(StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, Stack + 0x60), fx.target()).caller.get(Rbp) ==
        Stack + 0x60);
}

TEST_CASE("stack scan on arm64: no frame pointer taken from the stack (a frame record may lie anywhere in its frame)",
          "[fallback][scan][arm64]") {
  constexpr uint64_t AfterBl = 0x1704;
  Fixture fx(Arch::Arm64);
  put(fx.code, 0x700, {0x10, 0x00, 0x00, 0x94}); // bl
  fx.word(0x40, AfterBl);
  fx.word(0x60, Stack + 0x100); // a record above the caller's sp, which the frame's x29 points at
  fx.word(0x68, AfterBl);
  UnwindResult r = StackScanUnwinder().unwind(fx.frame(CodeStart, Stack + 0x20, Stack + 0x60), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == AfterBl);
  CHECK(r.caller.sp() == Stack + 0x48);
  CHECK_FALSE(r.caller.get(r.caller.fpRegister()));
}

// ---------------------------------------------------------------------------
// The three chained by the walker, in the order the tool uses them.

namespace {

struct Walk {
  Fixture fx;
  ThreadInfo thread;
  BadCallUnwinder badCall;
  FramePointerUnwinder framePointer;
  StackScanUnwinder scan;
  std::unique_ptr<StackWalker> walker;

  std::vector<Frame> run() {
    walker = std::make_unique<StackWalker>(fx.target(), thread, std::vector<Unwinder *>{&badCall, &framePointer, &scan});
    return walkAll(*walker);
  }
};

} // namespace

TEST_CASE("a walk through a bad call, a frame record and a scan", "[fallback][walk]") {
  Walk w;
  w.fx.word(0x00, AfterCallRel32); // the bad call's return address
  w.fx.word(0x08, Unmapped);
  w.fx.word(0x10, Stack + 0x40);   // frame record of the bad call's caller (rbp = Stack+0x10)
  w.fx.word(0x18, AfterCallRax);
  w.fx.word(0x20, 0);              // the next frame: scanned from here
  w.fx.word(0x28, NotAfterCall);
  w.fx.word(0x30, Stack + 0x100);
  w.fx.word(0x38, AfterCallRipMem);
  w.fx.word(0x40, Stack + 0x80);   // a frame record whose return address is data
  w.fx.word(0x48, Unmapped);
  w.thread.context = registersAt(0, Stack, {Rbx, Rax}); // called through a null pointer
  w.thread.context.set(Rbp, Stack + 0x10);

  std::vector<Frame> frames = w.run();
  REQUIRE(frames.size() == 4);

  CHECK(frames[0].trust == FrameTrust::Context);
  CHECK(frames[0].ip == 0);

  CHECK(frames[1].trust == FrameTrust::Scan); // the bad-call unwinder's, not the frame record's
  CHECK(frames[1].ip == AfterCallRel32);
  CHECK(frames[1].sp == Stack + 0x08);
  CHECK(frames[1].regs.get(Rbp) == Stack + 0x10);
  CHECK(frames[1].regs.get(Rbx) == 0xbbbbu);
  CHECK_FALSE(frames[1].regs.isKnown(Rax));
  CHECK_FALSE(frames[1].ipIsExact);
  REQUIRE(frames[1].module);
  CHECK(frames[1].module->name == "app");

  CHECK(frames[2].trust == FrameTrust::FramePointer);
  CHECK(frames[2].ip == AfterCallRax);
  CHECK(frames[2].sp == Stack + 0x20);
  CHECK(frames[2].regs.get(Rbp) == Stack + 0x40);
  CHECK_FALSE(frames[2].regs.isKnown(Rbx));

  CHECK(frames[3].trust == FrameTrust::Scan);
  CHECK(frames[3].ip == AfterCallRipMem);
  CHECK(frames[3].sp == Stack + 0x40);
  CHECK_FALSE(frames[3].regs.isKnown(Rbp));

  // Frame 3 has no frame pointer and nothing above it looks like a return address.
  CHECK(w.walker->stopReason() == StopReason::NoUnwindInfo);
  for (size_t i = 0; i < frames.size(); ++i) CHECK(frames[i].index == i);
}

TEST_CASE("a walk along a frame-pointer chain to its null end", "[fallback][walk]") {
  Walk w;
  w.fx.word(0x10, AfterCallRipMem); // a scan from the context's sp would take this
  w.fx.word(0x40, Stack + 0x80);
  w.fx.word(0x48, AfterCallRax);
  w.fx.word(0x80, Stack + 0xc0);
  w.fx.word(0x88, JitAfterCall); // JIT code: fine for a frame record
  w.fx.word(0xc0, 0);
  w.fx.word(0xc8, 0);
  w.thread.context = RegisterFile(Arch::X86_64);
  w.thread.context.setPc(CodeStart + 0x20); // executable: not a bad call
  w.thread.context.setSp(Stack);
  w.thread.context.set(Rbp, Stack + 0x40);

  std::vector<Frame> frames = w.run();
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].trust == FrameTrust::Context);
  CHECK(frames[1].trust == FrameTrust::FramePointer);
  CHECK(frames[1].ip == AfterCallRax);
  CHECK(frames[1].sp == Stack + 0x50);
  CHECK(frames[2].trust == FrameTrust::FramePointer);
  CHECK(frames[2].ip == JitAfterCall);
  CHECK(frames[2].sp == Stack + 0x90);
  CHECK(frames[2].module == nullptr);
  // Nothing above the last record looks like a return address: the walk ends, without claiming the stack does.
  CHECK(w.walker->stopReason() == StopReason::NoUnwindInfo);
}

TEST_CASE("a frame-pointer chain that ends early: the scan finds the caller above", "[fallback][walk]") {
  // fill() built without frame pointers or unwind tables left rbp at zeros;
  // main's return address is still on the stack, as gdb finds it.
  Walk w;
  w.fx.word(0x40, 0);
  w.fx.word(0x48, 0);
  w.fx.word(0x18, AfterCallRax);
  w.thread.context = RegisterFile(Arch::X86_64);
  w.thread.context.setPc(CodeStart + 0x20);
  w.thread.context.setSp(Stack);
  w.thread.context.set(Rbp, Stack + 0x40);

  std::vector<Frame> frames = w.run();
  REQUIRE(frames.size() >= 2);
  CHECK(frames[1].trust == FrameTrust::Scan);
  CHECK(frames[1].ip == AfterCallRax);
  CHECK(frames[1].sp == Stack + 0x20);
}
