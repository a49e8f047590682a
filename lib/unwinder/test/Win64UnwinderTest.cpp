// The Windows x64 unwinder end to end: a module's PE headers name its
// exception directory (.pdata), whose RUNTIME_FUNCTIONs lead to UNWIND_INFO
// (.xdata), all read through a Target holding a synthetic image and stack.
// (Win64UnwindTest.cpp tests the unwind codes themselves, given a
// RUNTIME_FUNCTION.)
#include "SyntheticStack.h"

#include "stackwalk/unwinder/Win64Unwinder.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Base = 0x140000000, ImageSize = 0x2000, Stack = 0x10000, StackSize = 0x1000;
// Functions (RVAs) in the image's .pdata:
//   F 0x1000-0x1040  push rbx; sub rsp, 0x20            (calls out at 0x101b; 0x103b, its last instruction)
//   G 0x1100-0x1180  push rbp; push rdi; sub rsp, 0x28  (calls F at 0x114b)
//   H 0x1280-0x12c0  push rbp; mov rbp, rsp; sub rsp, 0x20  (GCC's -O0 frame: rbp its frame register)
// and leaf code at 0x1200, which no entry covers.
constexpr uint32_t F = 0x1000, FEnd = 0x1040, G = 0x1100, GEnd = 0x1180, Leaf = 0x1200, H = 0x1280, HEnd = 0x12c0;
constexpr uint64_t ReturnIntoF = Base + 0x1020, ReturnAtFEnd = Base + FEnd, ReturnIntoG = Base + 0x1150;
enum Op : uint8_t { Push = 0, AllocSmall = 2, SetFp = 3 };
// Win64 numbers, as unwind codes name registers.
constexpr uint8_t W64Rbx = 3, W64Rbp = 5, W64Rdi = 7;

uint16_t code(uint8_t offset, uint8_t op, uint8_t info) { return uint16_t(offset | op << 8 | info << 12); }
void put32(std::vector<uint8_t> &bytes, size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, 4); }

struct Fixture {
  std::vector<uint8_t> image = std::vector<uint8_t>(ImageSize, 0);
  std::vector<uint8_t> stack = std::vector<uint8_t>(StackSize, 0);
  std::unique_ptr<Target> built;

  Fixture() {
    writePeHeaders(image, 0x300, 3);
    entry(0x300, F, FEnd, 0x400);
    entry(0x30c, G, GEnd, 0x420);
    entry(0x318, H, HEnd, 0x440);
    info(0x400, 5, {code(5, AllocSmall, 3), code(1, Push, W64Rbx)});
    info(0x420, 6, {code(6, AllocSmall, 4), code(2, Push, W64Rdi), code(1, Push, W64Rbp)});
    info(0x440, 8, {code(8, AllocSmall, 3), code(4, SetFp, 0), code(1, Push, W64Rbp)}, W64Rbp);
    std::fill(image.begin() + 0x1000, image.end(), 0xcc); // int3
    put(0x1000, {0x53, 0x48, 0x83, 0xec, 0x20});          // push rbx; sub rsp, 0x20
    put(0x101b, {0xe8, 0, 0, 0, 0});                       // call
    put(0x103b, {0xe8, 0, 0, 0, 0});                       // call (noreturn, at the end)
    put(0x1100, {0x55, 0x57, 0x48, 0x83, 0xec, 0x28});    // push rbp; push rdi; sub rsp, 0x28
    put(0x114b, {0xe8, 0xb0, 0xfe, 0xff, 0xff});          // call F
  }
  void entry(size_t at, uint32_t begin, uint32_t end, uint32_t unwindInfo) {
    put32(image, at, begin), put32(image, at + 4, end), put32(image, at + 8, unwindInfo);
  }
  void info(size_t at, uint8_t prolog, std::vector<uint16_t> codes, uint8_t frameRegister = 0) {
    image[at] = 1; // version 1, no flags
    image[at + 1] = prolog;
    image[at + 2] = uint8_t(codes.size());
    image[at + 3] = frameRegister; // at offset 0
    std::memcpy(&image[at + 4], codes.data(), codes.size() * 2);
  }
  void put(size_t at, std::vector<uint8_t> bytes) { std::copy(bytes.begin(), bytes.end(), image.begin() + at); }
  void word(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }
  // After changing the image or stack once the target was built.
  void rebuild() { built.reset(); }

  const Target &target() {
    if (!built)
      built = makeTarget(Arch::X86_64, OS::Windows, makeMemory({{Base, image}, {Stack, stack}}),
                         {{Stack, Stack + StackSize, true, true, false},
                          {Base, Base + 0x1000, true, false, false},
                          {Base + 0x1000, Base + ImageSize, true, false, true}},
                         {makeModule("app.exe", Base, ImageSize)});
    return *built;
  }

  // `exact` for the context frame (else ip is a return address).
  Frame frame(uint64_t ip, uint64_t sp, bool exact) {
    return makeFrame(target(), ip, sp, exact ? FrameTrust::Context : FrameTrust::UnwindInfo,
                     {Rax, Rdx, Rbx, Rbp, Rsi, Rdi, R12});
  }
};

} // namespace

TEST_CASE("Win64Unwinder: a frame's caller through the module's .pdata and .xdata", "[win64]") {
  Fixture fx;
  fx.word(0x20, 0x7777);      // rbx, pushed by F
  fx.word(0x28, ReturnIntoG); // F's return address
  Win64Unwinder unwinder;
  CHECK(unwinder.trust() == FrameTrust::UnwindInfo);
  UnwindResult r = unwinder.unwind(fx.frame(ReturnIntoF, Stack, /*exact=*/false), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnIntoG);
  CHECK(r.caller.sp() == Stack + 0x30);
  CHECK(r.caller.get(Rbx) == 0x7777u);                 // restored from the stack
  CHECK(r.caller.get(Rbp) == 0xb0b0u);                 // nonvolatile, untouched by F
  CHECK(r.caller.get(Rsi) == 0x5151u);                 // nonvolatile on Windows
  CHECK(r.caller.get(R12) == 0x1212u);
  CHECK(known(r.caller) == std::vector<unsigned>{Rbx, Rsi, Rdi, Rbp, Rsp, R12, Rip}); // rax, rdx: volatile
  CHECK_FALSE(r.callerIpIsExact);
}

// A frame the scan found has no frame register (the scan on Windows x64
// finds none): H's prolog left rsp 0x20 below rbp's slot, and the frame's rsp,
// the one it made its call with, is that one in H's body (no alloca).
TEST_CASE("Win64Unwinder: a frame at a call whose frame register is unknown, unwound from its stack pointer",
          "[win64]") {
  Fixture fx;
  fx.word(0x20, 0x5050); // rbp, pushed by H
  uint64_t returnAddress = ReturnIntoG;
  SECTION("the caller follows a call") {}
  SECTION("a word after no call: no caller, the scan goes on") { returnAddress = Base + Leaf; }
  fx.word(0x28, returnAddress);
  Frame scanned = makeFrame(fx.target(), Base + H + 0x20, Stack, FrameTrust::Scan, {});
  UnwindResult r = Win64Unwinder().unwind(scanned, fx.target());
  if (returnAddress == ReturnIntoG) {
    REQUIRE(r.status == Status::Caller);
    CHECK(r.caller.pc() == ReturnIntoG);
    CHECK(r.caller.sp() == Stack + 0x30);
    CHECK(r.caller.get(Rbp) == 0x5050u);
  } else {
    CHECK(r.status == Status::NoInfo);
  }
  // The same for a frame the unwind data found, above a function that kept no frame register.
  scanned.trust = FrameTrust::UnwindInfo;
  CHECK(Win64Unwinder().unwind(scanned, fx.target()).status == r.status);
  // An interrupted frame's registers are its own: one it lacks is not guessed.
  scanned.trust = FrameTrust::Context;
  scanned.ipIsExact = true;
  CHECK(Win64Unwinder().unwind(scanned, fx.target()).status == Status::NoInfo);
}

TEST_CASE("Win64Unwinder: a return address at a function's end belongs to the call before it", "[win64]") {
  // The call is F's last instruction (a call to a noreturn function): the
  // return address is the first byte after F, which no entry covers; only
  // ip - 1 is in F. Taken as a leaf, the frame would return to [sp].
  Fixture fx;
  fx.word(0x00, ReturnIntoG); // where a leaf's return address would be
  fx.word(0x20, 0x7777);
  fx.word(0x28, ReturnIntoG + 0x10);
  UnwindResult r = Win64Unwinder().unwind(fx.frame(ReturnAtFEnd, Stack, /*exact=*/false), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnIntoG + 0x10);
  CHECK(r.caller.sp() == Stack + 0x30);
  CHECK(r.caller.get(Rbx) == 0x7777u);
}

TEST_CASE("Win64Unwinder: code that no entry covers is a leaf", "[win64]") {
  Fixture fx;
  fx.word(0x00, ReturnIntoF);
  fx.word(0x08, ReturnIntoG);
  uint64_t ip = Base + Leaf + 0x10;
  SECTION("in a gap between functions") {}
  SECTION("right after the last function") { ip = Base + GEnd; }
  UnwindResult r = Win64Unwinder().unwind(fx.frame(ip, Stack, /*exact=*/true), fx.target());
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == ReturnIntoF);
  CHECK(r.caller.sp() == Stack + 8);
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(Rdi) == 0xd1d1u);
  CHECK_FALSE(r.caller.isKnown(Rax));
}

TEST_CASE("Win64Unwinder: what it refuses", "[win64]") {
  Fixture fx;
  fx.word(0x20, 0x7777);
  fx.word(0x28, ReturnIntoG);
  Win64Unwinder control;
  REQUIRE(control.unwind(fx.frame(ReturnIntoF, Stack, false), fx.target()).status == Status::Caller);

  SECTION("a frame outside every module") {
    Frame f = fx.frame(0x5000, Stack, false);
    REQUIRE(f.module == nullptr);
    CHECK(Win64Unwinder().unwind(f, fx.target()).status == Status::NoInfo);
  }
  SECTION("a module without PE headers") {
    fx.image[0] = 0;
    fx.rebuild();
    CHECK(Win64Unwinder().unwind(fx.frame(ReturnIntoF, Stack, false), fx.target()).status == Status::NoInfo);
  }
  SECTION("a module without an exception directory") {
    put32(fx.image, 0x40 + 24 + 112 + 3 * 8 + 4, 0);
    fx.rebuild();
    CHECK(Win64Unwinder().unwind(fx.frame(ReturnIntoF, Stack, false), fx.target()).status == Status::NoInfo);
  }
  SECTION("an exception directory outside the image") {
    put32(fx.image, 0x40 + 24 + 112 + 3 * 8, 0x7fff0000);
    fx.rebuild();
    CHECK(Win64Unwinder().unwind(fx.frame(ReturnIntoF, Stack, false), fx.target()).status == Status::NoInfo);
  }
  SECTION("malformed unwind info") {
    fx.image[0x400] = 3; // version 3
    fx.rebuild();
    CHECK(Win64Unwinder().unwind(fx.frame(ReturnIntoF, Stack, false), fx.target()).status == Status::NoInfo);
  }
  SECTION("a stack the codes need that is not in the dump") {
    CHECK(Win64Unwinder().unwind(fx.frame(ReturnIntoF, Stack + StackSize - 0x10, false), fx.target()).status ==
          Status::NoInfo);
  }
}

TEST_CASE("Win64Unwinder in a walk: leaf, F, G, then a null return address", "[win64][walk]") {
  Fixture fx;
  fx.word(0x00, ReturnIntoF);  // the leaf's return address
  fx.word(0x28, 0x7777);       // F: rbx
  fx.word(0x30, ReturnIntoG);  // F: return address
  fx.word(0x60, 0xd7d7);       // G: rdi
  fx.word(0x68, 0xb7b7);       // G: rbp
  fx.word(0x70, 0);            // G: return address, the outermost frame
  ThreadInfo thread;
  thread.context = registersAt(Base + Leaf + 0x10, Stack, {Rbx, Rax, R12});
  Win64Unwinder unwinder;
  StackWalker walker(fx.target(), thread, {&unwinder});
  std::vector<Frame> frames = walkAll(walker);

  REQUIRE(frames.size() == 3);
  CHECK(frames[0].trust == FrameTrust::Context);
  CHECK(frames[1].trust == FrameTrust::UnwindInfo);
  CHECK(frames[1].ip == ReturnIntoF);
  CHECK(frames[1].sp == Stack + 8);
  CHECK(frames[1].regs.get(Rbx) == 0xbbbbu);
  CHECK_FALSE(frames[1].regs.isKnown(Rax));
  REQUIRE(frames[1].module);
  CHECK(frames[1].module->name == "app.exe");
  CHECK(frames[2].trust == FrameTrust::UnwindInfo);
  CHECK(frames[2].ip == ReturnIntoG);
  CHECK(frames[2].sp == Stack + 0x38);
  CHECK(frames[2].regs.get(Rbx) == 0x7777u);
  CHECK(frames[2].regs.get(R12) == 0x1212u);
  CHECK(walker.stopReason() == StopReason::NullIp);
}
