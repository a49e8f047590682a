#include "stackwalk/unwinder/Win64Unwind.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;

namespace {

constexpr uint64_t Base = 0x140000000, CodeRva = 0x1000, InfoRva = 0x2000, Stack = 0x10000;
constexpr uint64_t ReturnAddress = 0x140005555;
// Win64 unwind codes and DWARF numbers of the registers used here.
enum Op : uint8_t { Push = 0, AllocLarge = 1, AllocSmall = 2, SetFp = 3, Save = 4, SaveFar = 5, Epilog = 6,
                    SaveXmm = 8, SaveXmmFar = 9, MachFrame = 10, SetFpLarge = 11 };
constexpr unsigned Rbx = 3, Rbp = 6, Rdi = 5, R12 = 12;

uint16_t code(uint8_t offset, uint8_t op, uint8_t info) { return uint16_t(offset | op << 8 | info << 12); }

struct Fixture {
  std::vector<uint8_t> text = std::vector<uint8_t>(0x200, 0x90);
  std::vector<uint8_t> xdata = std::vector<uint8_t>(0x200, 0);
  std::vector<uint8_t> stack = std::vector<uint8_t>(0x400, 0);

  // UNWIND_INFO at InfoRva + at.
  void info(size_t at, uint8_t version, uint8_t flags, uint8_t prolog, std::vector<uint16_t> codes,
            uint8_t frameReg = 0, uint8_t frameOffset = 0) {
    xdata[at] = uint8_t(version | flags << 3);
    xdata[at + 1] = prolog;
    xdata[at + 2] = uint8_t(codes.size());
    xdata[at + 3] = uint8_t(frameReg | frameOffset << 4);
    if (!codes.empty()) std::memcpy(&xdata[at + 4], codes.data(), codes.size() * 2);
  }
  void stackWord(uint64_t offset, uint64_t value) { std::memcpy(&stack[offset], &value, 8); }
  void codeBytes(size_t offset, std::vector<uint8_t> bytes) { std::copy(bytes.begin(), bytes.end(), text.begin() + offset); }

  Frame frame(uint64_t offset, uint64_t sp, bool exact = false) {
    Frame f;
    f.regs = RegisterFile(Arch::X86_64);
    f.ip = Base + CodeRva + offset;
    f.sp = sp;
    f.ipIsExact = exact;
    f.regs.setPc(f.ip);
    f.regs.setSp(sp);
    f.regs.set(0, 0xaaaa);   // rax: volatile, must not survive
    f.regs.set(R12, 0x1212); // nonvolatile, untouched: survives
    return f;
  }
  // The image and stack as the test has written them.
  const BufferMemory &fill() {
    memory = BufferMemory();
    memory.add(Base + CodeRva, text);
    memory.add(Base + InfoRva, xdata);
    memory.add(Stack, stack);
    return memory;
  }
  llvm::Expected<UnwindResult> unwind(const Frame &f, RuntimeFunction function = {CodeRva, CodeRva + 0x100, InfoRva}) {
    return unwindWin64(fill(), Base, function, f);
  }
  BufferMemory memory;
};

UnwindResult ok(llvm::Expected<UnwindResult> result) {
  if (!result) FAIL(llvm::toString(result.takeError()));
  return *result;
}

std::string error(llvm::Expected<UnwindResult> result) {
  if (result) return "";
  return llvm::toString(result.takeError());
}

} // namespace

TEST_CASE("push and small allocation, unwound from the body") {
  Fixture fx; // push rbx; sub rsp, 0x20
  fx.info(0, 1, 0, 5, {code(5, AllocSmall, 3), code(1, Push, 3)});
  fx.stackWord(0x20, 0xbbbb);
  fx.stackWord(0x28, ReturnAddress);
  UnwindResult r = ok(fx.unwind(fx.frame(0x10, Stack)));
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 0x30);
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(R12) == 0x1212u);
  CHECK_FALSE(r.caller.isKnown(0));
  CHECK_FALSE(r.callerIpIsExact);
}

TEST_CASE("a partial prolog applies only the codes the pc has passed") {
  Fixture fx;
  fx.info(0, 1, 0, 5, {code(5, AllocSmall, 3), code(1, Push, 3)});
  fx.stackWord(0x0, 0xbbbb);
  fx.stackWord(0x8, ReturnAddress);
  UnwindResult r = ok(fx.unwind(fx.frame(1, Stack, /*exact=*/true))); // after push rbx only
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 0x10);
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
}

TEST_CASE("large allocations in both forms") {
  Fixture fx;
  SECTION("16-bit, scaled by 8") {
    fx.info(0, 1, 0, 8, {code(8, AllocLarge, 0), 0x30}); // 0x180 bytes
    fx.stackWord(0x180, ReturnAddress);
    CHECK(ok(fx.unwind(fx.frame(0x20, Stack))).caller.sp() == Stack + 0x188);
  }
  SECTION("32-bit") {
    fx.info(0, 1, 0, 8, {code(8, AllocLarge, 1), 0x0200, 0x0000}); // 0x200 bytes
    fx.stackWord(0x200, ReturnAddress);
    CHECK(ok(fx.unwind(fx.frame(0x20, Stack))).caller.pc() == ReturnAddress);
  }
}

TEST_CASE("a frame pointer re-establishes the stack pointer; saves are relative to it") {
  Fixture fx; // push rbp; sub rsp, 0x40; lea rbp, [rsp+0x20]; mov [rsp+0x30], rdi; ...alloca moves rsp
  fx.info(0, 1, 0, 15, {code(15, Save, 7), 6, code(10, SetFp, 0), code(5, AllocSmall, 7), code(1, Push, 5)},
          /*frameReg=*/5, /*frameOffset=*/2);
  uint64_t frameBase = Stack + 0x100; // rsp after the prolog's allocation
  fx.stackWord(0x100 + 0x30, 0xd1d1); // saved rdi
  fx.stackWord(0x100 + 0x40, 0x5050); // saved rbp
  fx.stackWord(0x100 + 0x48, ReturnAddress);
  Frame f = fx.frame(0x40, Stack + 0x10); // rsp lowered by an alloca
  f.regs.set(Rbp, frameBase + 0x20);
  UnwindResult r = ok(fx.unwind(f));
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == frameBase + 0x50);
  CHECK(r.caller.get(Rbp) == 0x5050u);
  CHECK(r.caller.get(Rdi) == 0xd1d1u);
}

TEST_CASE("far saves and XMM saves take their slots") {
  Fixture fx;
  fx.info(0, 1, 0, 30,
          {code(30, SaveXmm, 6), 2, code(26, SaveXmmFar, 7), 0x40, 0, code(20, SaveFar, 3), 0x0040, 0x0000,
           code(12, AllocSmall, 15), code(1, Push, 12)});
  fx.stackWord(0x40, 0xb0b0);     // rbx, far save at frame+0x40
  fx.stackWord(0x80, 0xc1c1);     // r12 pushed before the 0x80 allocation
  fx.stackWord(0x88, ReturnAddress);
  UnwindResult r = ok(fx.unwind(fx.frame(0x50, Stack)));
  CHECK(r.caller.get(Rbx) == 0xb0b0u);
  CHECK(r.caller.get(R12) == 0xc1c1u);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 0x90);
}

TEST_CASE("a machine frame restores rip and rsp as the CPU pushed them") {
  Fixture fx;
  SECTION("without an error code") {
    fx.info(0, 1, 0, 0, {code(0, MachFrame, 0)});
    fx.stackWord(0x0, ReturnAddress);
    fx.stackWord(0x18, Stack + 0x300);
    UnwindResult r = ok(fx.unwind(fx.frame(0x10, Stack)));
    CHECK(r.caller.pc() == ReturnAddress);
    CHECK(r.caller.sp() == Stack + 0x300);
    CHECK(r.callerIpIsExact);
  }
  SECTION("with an error code") {
    fx.info(0, 1, 0, 0, {code(0, MachFrame, 1)});
    fx.stackWord(0x8, ReturnAddress);
    fx.stackWord(0x20, Stack + 0x300);
    CHECK(ok(fx.unwind(fx.frame(0x10, Stack))).caller.sp() == Stack + 0x300);
  }
}

TEST_CASE("UWOP_SET_FPREG_LARGE (CoreCLR on Unix)") {
  Fixture fx;
  fx.info(0, 1, 0, 8, {code(8, SetFpLarge, 0), 0x0020, 0x0000, code(1, Push, 5)}, 5, 15); // offset 0x20*16
  Frame f = fx.frame(0x30, Stack);
  f.regs.set(Rbp, Stack + 0x200);
  fx.stackWord(0x0, 0x5050);
  fx.stackWord(0x8, ReturnAddress);
  UnwindResult r = ok(fx.unwind(f));
  CHECK(r.caller.get(Rbp) == 0x5050u);
  CHECK(r.caller.pc() == ReturnAddress);
}

TEST_CASE("version 1 epilogs are recognized by their instructions") {
  Fixture fx;
  fx.info(0, 1, 0, 5, {code(5, AllocSmall, 4), code(1, Push, 3)});
  SECTION("add rsp; pop; ret") {
    fx.codeBytes(0x40, {0x48, 0x83, 0xc4, 0x28, 0x5b, 0xc3});
    fx.stackWord(0x28, 0xbbbb);
    fx.stackWord(0x30, ReturnAddress);
    UnwindResult r = ok(fx.unwind(fx.frame(0x40, Stack, true)));
    CHECK(r.caller.get(Rbx) == 0xbbbbu);
    CHECK(r.caller.sp() == Stack + 0x38);
  }
  SECTION("midway: only the pop and the ret remain") {
    fx.codeBytes(0x40, {0x48, 0x83, 0xc4, 0x28, 0x5b, 0xc3});
    fx.stackWord(0x0, 0xbbbb);
    fx.stackWord(0x8, ReturnAddress);
    UnwindResult r = ok(fx.unwind(fx.frame(0x44, Stack, true)));
    CHECK(r.caller.get(Rbx) == 0xbbbbu);
    CHECK(r.caller.pc() == ReturnAddress);
  }
  SECTION("a jump out of the function is a tail call") {
    fx.codeBytes(0x40, {0x5b, 0xe9, 0x00, 0x10, 0x00, 0x00});
    fx.stackWord(0x0, 0xbbbb);
    fx.stackWord(0x8, ReturnAddress);
    CHECK(ok(fx.unwind(fx.frame(0x40, Stack, true))).caller.pc() == ReturnAddress);
  }
  SECTION("a jump inside the function is not an epilog") {
    fx.codeBytes(0x40, {0x5b, 0xeb, 0x10});
    fx.stackWord(0x28, 0xbbbb);
    fx.stackWord(0x30, ReturnAddress);
    UnwindResult r = ok(fx.unwind(fx.frame(0x40, Stack, true)));
    CHECK(r.caller.sp() == Stack + 0x38); // the prolog was unwound instead
  }
  SECTION("lea rsp, [frame register + disp]") {
    fx.info(0, 1, 0, 8, {code(8, SetFp, 0), code(4, AllocSmall, 3), code(1, Push, 5)}, 5, 0);
    fx.codeBytes(0x40, {0x48, 0x8d, 0x65, 0x20, 0x5d, 0xc3});
    Frame f = fx.frame(0x40, Stack);
    f.ipIsExact = true;
    f.regs.set(Rbp, Stack + 0x80);
    fx.stackWord(0xa0, 0x5050);
    fx.stackWord(0xa8, ReturnAddress);
    UnwindResult r = ok(fx.unwind(f));
    CHECK(r.caller.get(Rbp) == 0x5050u);
    CHECK(r.caller.sp() == Stack + 0xb0);
  }
}

TEST_CASE("version 2 epilogs come from UWOP_EPILOG codes") {
  Fixture fx; // epilog of 3 bytes at the function's end (0xfd): pop rdi; pop rbx; ret
  fx.info(0, 2, 0, 6, {code(3, Epilog, 1), code(0, Epilog, 0), code(6, AllocSmall, 3), code(2, Push, 7), code(1, Push, 3)});
  fx.stackWord(0x0, 0xbbbb);
  fx.stackWord(0x8, ReturnAddress);
  // At 0xfe, `pop rdi` (1 byte) ran: rbx and the return remain.
  Frame f = fx.frame(0xfe, Stack, true);
  f.regs.set(Rdi, 0xd1d1);
  UnwindResult r = ok(fx.unwind(f));
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(Rdi) == 0xd1d1u);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 0x10);
}

TEST_CASE("chained unwind info continues with the parent's codes") {
  Fixture fx;
  // The child at 0x100: one push of rbx, then the parent RUNTIME_FUNCTION.
  fx.info(0x100, 1, 4, 0, {code(0, Push, 3)}); // one code, padded to two slots
  uint32_t parent[3] = {uint32_t(CodeRva), uint32_t(CodeRva + 0x20), uint32_t(InfoRva)};
  std::memcpy(&fx.xdata[0x108], parent, 12);
  fx.info(0, 1, 0, 1, {code(1, Push, 7)}); // the parent pushed rdi
  fx.stackWord(0x0, 0xbbbb);
  fx.stackWord(0x8, 0xd1d1);
  fx.stackWord(0x10, ReturnAddress);
  UnwindResult r = ok(fx.unwind(fx.frame(0x60, Stack), {CodeRva + 0x50, CodeRva + 0x80, InfoRva + 0x100}));
  CHECK(r.caller.get(Rbx) == 0xbbbbu);
  CHECK(r.caller.get(Rdi) == 0xd1d1u);
  CHECK(r.caller.pc() == ReturnAddress);
}

TEST_CASE("a leaf function returns through the stack pointer") {
  Fixture fx;
  fx.stackWord(0x0, ReturnAddress);
  Frame f = fx.frame(0, Stack);
  UnwindResult r = unwindWin64Leaf(fx.fill(), f);
  CHECK(r.caller.pc() == ReturnAddress);
  CHECK(r.caller.sp() == Stack + 8);
  CHECK(r.caller.get(R12) == 0x1212u);
}

TEST_CASE("malformed unwind info is an error, never a crash or a hang") {
  Fixture fx;
  SECTION("codes counted past the end of readable memory") {
    fx.info(0x1fc, 1, 0, 0, {});
    fx.xdata[0x1fe] = 200;
    CHECK(error(fx.unwind(fx.frame(0x10, Stack), {CodeRva, CodeRva + 0x100, InfoRva + 0x1fc})).rfind(
              "the unwind codes at", 0) == 0);
  }
  SECTION("a multi-slot code cut off by the count") {
    fx.info(0, 1, 0, 8, {code(8, AllocLarge, 1), 0x10});
    CHECK(error(fx.unwind(fx.frame(0x10, Stack))) == "an unwind code runs past the count");
  }
  SECTION("chained info that points to itself") {
    fx.info(0, 1, 4, 0, {code(0, Push, 3)});
    uint32_t self[3] = {uint32_t(CodeRva), uint32_t(CodeRva + 0x100), uint32_t(InfoRva)};
    std::memcpy(&fx.xdata[8], self, 12);
    for (int i = 0; i < 40; ++i) fx.stackWord(i * 8, Stack);
    CHECK(error(fx.unwind(fx.frame(0x10, Stack))) == "chained unwind info is deeper than 32 (a loop?)");
  }
  SECTION("an UNWIND_INFO RVA outside the image") {
    CHECK(error(fx.unwind(fx.frame(0x10, Stack), {CodeRva, CodeRva + 0x100, 0x7fff0000})).rfind("UNWIND_INFO at", 0) == 0);
  }
  SECTION("an unknown version or code") {
    fx.info(0, 3, 0, 0, {});
    CHECK(error(fx.unwind(fx.frame(0x10, Stack))) == "unsupported UNWIND_INFO version 3");
    fx.info(0, 1, 0, 0, {code(0, 12, 0)});
    CHECK(error(fx.unwind(fx.frame(0x10, Stack))) == "unknown unwind code 12");
  }
  SECTION("a stack that is not in the dump") {
    fx.info(0, 1, 0, 1, {code(1, Push, 3)});
    CHECK(error(fx.unwind(fx.frame(0x10, 0x900000))) == "the stack at 0x900000 is not in the dump");
  }
}
