// Windows ARM64 unwind data on hand-assembled .xdata records and packed
// RUNTIME_FUNCTIONs, following Microsoft's "ARM64 exception handling": each
// unwind code, the prolog, epilog and body cases, packed data's expansion, and
// what is refused. The stack holds recognisable values: the word at
// Stack + 8 * i is 0x1000 + i.
#include "SyntheticStack.h"

#include "stackwalk/unwinder/Arm64WindowsUnwind.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Base = 0x100000, XdataRva = 0x200, FunctionRva = 0x1000, Stack = 0x8000;
constexpr unsigned X19 = 19, X20 = 20, X21 = 21, X22 = 22, X29 = 29, Lr = 30, Pc = 32;
constexpr uint64_t CalleeLr = 0x101234, CalleeFp = Stack + 0x40;

uint64_t stackWord(unsigned i) { return 0x1000 + i; }

// The value of an Expected a test needs, or the test fails with its error.
template <typename T> T take(llvm::Expected<T> value) {
  if (!value) FAIL(llvm::toString(value.takeError()));
  return std::move(*value);
}

struct Fixture {
  std::vector<uint8_t> xdata;
  std::unique_ptr<Target> target;

  // An .xdata record: the header word(s), then epilog scopes, then the codes.
  void record(std::vector<uint32_t> words, std::vector<uint8_t> codes) {
    xdata.clear();
    for (uint32_t w : words)
      for (int i = 0; i < 4; ++i) xdata.push_back(uint8_t(w >> (8 * i)));
    xdata.insert(xdata.end(), codes.begin(), codes.end());
    while (xdata.size() % 4) xdata.push_back(0);
  }
  const Target &build() {
    std::vector<uint8_t> stack(0x200);
    for (unsigned i = 0; i < stack.size() / 8; ++i) {
      uint64_t v = stackWord(i);
      std::memcpy(&stack[8 * i], &v, 8);
    }
    target = makeTarget(Arch::Arm64, OS::Windows, makeMemory({{Base + XdataRva, xdata}, {Stack, stack}}), {}, {});
    return *target;
  }
  // The context frame `offset` instructions into the function.
  Frame frame(uint32_t offset, uint64_t sp = Stack) {
    Frame f = makeFrame(*target, Base + FunctionRva + 4 * offset, sp, FrameTrust::Context, {}, Arch::Arm64);
    f.regs.set(Lr, CalleeLr);
    f.regs.set(X29, CalleeFp);
    f.regs.set(X19, 0x1919);
    f.regs.set(X20, 0x2020);
    f.regs.set(X21, 0x2121);
    f.regs.set(X22, 0x2222);
    f.regs.set(3, 0x33); // volatile: never carried
    return f;
  }
  UnwindResult unwind(uint32_t offset, uint32_t unwindData = XdataRva, uint64_t sp = Stack) {
    if (!target) build();
    RuntimeFunction function{uint32_t(FunctionRva), uint32_t(FunctionRva + 0x100), unwindData};
    return take(unwindArm64Windows(*target, Base, function, frame(offset, sp)));
  }
  std::string refusal(uint32_t offset, uint32_t unwindData = XdataRva) {
    if (!target) build();
    RuntimeFunction function{uint32_t(FunctionRva), uint32_t(FunctionRva + 0x100), unwindData};
    auto result = unwindArm64Windows(*target, Base, function, frame(offset));
    if (result) return "";
    return llvm::toString(result.takeError());
  }
};

// Header word: FunctionLength (instructions), E, EpilogCount (or the single
// epilog's code index), CodeWords.
uint32_t header(uint32_t length, uint32_t epilogs, uint32_t codeWords, bool singleEpilog = false) {
  return length | (singleEpilog ? 1u << 21 : 0) | (epilogs << 22) | (codeWords << 27);
}

// The prolog of a typical function, in unwind order (its last instruction first):
//   stp x29, lr, [sp, #-32]!   save_fplr_x 32      0x83
//   stp x19, x20, [sp, #16]    save_regp x19, 16   0xc8 0x02
//   mov x29, sp                set_fp              0xe1
const std::vector<uint8_t> TypicalProlog = {0xe1, 0xc8, 0x02, 0x83, 0xe4};

} // namespace

TEST_CASE("arm64 unwind: in the body every prolog code is undone, and the caller returns to lr",
          "[arm64unwind]") {
  Fixture fx;
  fx.record({header(40, 0, 2)}, TypicalProlog);
  fx.build();
  // The body runs with x29 = sp after the prolog; the frame record is at x29.
  Frame body = fx.frame(10, Stack);
  body.regs.set(X29, Stack);
  RuntimeFunction function{uint32_t(FunctionRva), uint32_t(FunctionRva + 160), uint32_t(XdataRva)};
  UnwindResult r = take(unwindArm64Windows(*fx.target, Base, function, body));
  CHECK(r.caller.get(X29) == stackWord(0));
  CHECK(r.caller.pc() == stackWord(1)); // the saved lr
  CHECK(r.caller.get(X19) == stackWord(2));
  CHECK(r.caller.get(X20) == stackWord(3));
  CHECK(r.caller.sp() == Stack + 32);
  CHECK(r.caller.get(X21) == 0x2121u); // callee-saved, untouched
  CHECK_FALSE(r.caller.isKnown(3));
  CHECK_FALSE(r.caller.isKnown(Lr)); // the caller's own lr is not known
  CHECK_FALSE(r.callerIpIsExact);
}

TEST_CASE("arm64 unwind: inside the prolog only the instructions that ran are undone", "[arm64unwind]") {
  Fixture fx;
  fx.record({header(40, 0, 2)}, TypicalProlog);
  SECTION("at the first instruction: nothing ran, lr is the return address") {
    UnwindResult r = fx.unwind(0);
    CHECK(r.caller.pc() == CalleeLr);
    CHECK(r.caller.sp() == Stack);
    CHECK(r.caller.get(X19) == 0x1919u);
  }
  SECTION("after stp x29, lr: only that is undone") {
    UnwindResult r = fx.unwind(1);
    CHECK(r.caller.pc() == stackWord(1));
    CHECK(r.caller.get(X29) == stackWord(0));
    CHECK(r.caller.sp() == Stack + 32);
    CHECK(r.caller.get(X19) == 0x1919u);
  }
  SECTION("after both saves, before mov x29, sp") {
    UnwindResult r = fx.unwind(2);
    CHECK(r.caller.get(X19) == stackWord(2));
    CHECK(r.caller.pc() == stackWord(1));
  }
}

TEST_CASE("arm64 unwind: epilog scopes; the instructions an epilog already ran are not undone again",
          "[arm64unwind]") {
  Fixture fx;
  // The epilog at instruction 20: ldp x19, x20, [sp, #16]; ldp x29, lr, [sp], #32; ret.
  // Its codes start at index 5: save_regp x19, 16; save_fplr_x 32; end.
  std::vector<uint8_t> codes = TypicalProlog;
  codes.insert(codes.end(), {0xc8, 0x02, 0x83, 0xe4});
  fx.record({header(24, 1, 3), 20u | (5u << 22)}, codes);
  SECTION("at the epilog's first instruction: both restores to come") {
    UnwindResult r = fx.unwind(20);
    CHECK(r.caller.get(X19) == stackWord(2));
    CHECK(r.caller.pc() == stackWord(1));
    CHECK(r.caller.sp() == Stack + 32);
  }
  SECTION("after its first ldp: x19 and x20 are the caller's already") {
    UnwindResult r = fx.unwind(21);
    CHECK(r.caller.get(X19) == 0x1919u);
    CHECK(r.caller.pc() == stackWord(1));
  }
  SECTION("at its ret: everything is undone, lr holds the return address") {
    UnwindResult r = fx.unwind(22);
    CHECK(r.caller.pc() == CalleeLr);
    CHECK(r.caller.sp() == Stack);
  }
  SECTION("before the epilog: the body") {
    fx.build();
    Frame body = fx.frame(19);
    body.regs.set(X29, Stack);
    UnwindResult r = take(unwindArm64(*fx.target, take(readArm64UnwindData(*fx.target, Base, XdataRva)), 19, body));
    CHECK(r.caller.pc() == stackWord(1));
  }
}

TEST_CASE("arm64 unwind: one epilog at the end (E), its codes at the index the header gives", "[arm64unwind]") {
  Fixture fx;
  // Function of 24 instructions; the epilog (3 instructions with ret) starts at 21.
  std::vector<uint8_t> codes = TypicalProlog;
  codes.insert(codes.end(), {0xc8, 0x02, 0x83, 0xe4});
  fx.record({header(24, 5, 3, /*singleEpilog=*/true)}, codes);
  CHECK(fx.unwind(22).caller.get(X19) == 0x1919u); // after the first ldp
  CHECK(fx.unwind(23).caller.pc() == CalleeLr);     // at ret
  CHECK(fx.unwind(21).caller.get(X19) == stackWord(2));
}

TEST_CASE("arm64 unwind: the extended header counts epilogs and code words beyond 5 bits", "[arm64unwind]") {
  Fixture fx;
  fx.record({header(40, 0, 0), 0u | (2u << 16)}, TypicalProlog);
  fx.build();
  Frame body = fx.frame(10, Stack);
  body.regs.set(X29, Stack);
  Arm64UnwindData data = take(readArm64UnwindData(*fx.target, Base, XdataRva));
  CHECK(data.codes.size() == 8);
  CHECK(take(unwindArm64(*fx.target, data, 10, body)).caller.pc() == stackWord(1));
}

TEST_CASE("arm64 unwind: each stack allocation and register save code", "[arm64unwind]") {
  Fixture fx;
  struct Case {
    const char *name;
    std::vector<uint8_t> codes;
    uint64_t sp;
    std::vector<std::pair<unsigned, uint64_t>> registers;
  };
  const Case cases[] = {
      {"alloc_s 48", {0x03, 0xe4}, Stack + 48, {}},
      {"alloc_m 0x1230", {0xc1, 0x23, 0xe4}, Stack + 0x1230, {}},
      {"alloc_l 0x123450", {0xe0, 0x01, 0x23, 0x45, 0xe4}, Stack + 0x1234500 / 0x100 * 0x10, {}},
      {"save_r19r20_x 32", {0x24, 0xe4}, Stack + 32, {{X19, stackWord(0)}, {X20, stackWord(1)}}},
      {"save_fplr 16", {0x42, 0xe4}, Stack, {{X29, stackWord(2)}}},
      {"save_fplr_x 64", {0x87, 0xe4}, Stack + 64, {{X29, stackWord(0)}}},
      {"save_regp x21, 24", {0xc8, 0x83, 0xe4}, Stack, {{X21, stackWord(3)}, {X22, stackWord(4)}}},
      {"save_regp_x x21, 48", {0xcc, 0x85, 0xe4}, Stack + 48, {{X21, stackWord(0)}, {X22, stackWord(1)}}},
      {"save_reg x22, 40", {0xd0, 0xc5, 0xe4}, Stack, {{X22, stackWord(5)}, {X21, 0x2121}}},
      {"save_reg_x x20, 16", {0xd4, 0x21, 0xe4}, Stack + 16, {{X20, stackWord(0)}, {X19, 0x1919}}},
      {"save_lrpair x21, 8", {0xd6, 0x41, 0xe4}, Stack, {{X21, stackWord(1)}, {Pc, stackWord(2)}}},
      {"save_fregp d8, 16 (not tracked)", {0xd8, 0x02, 0xe4}, Stack, {{X19, 0x1919}}},
      {"save_fregp_x d10, 32", {0xda, 0x83, 0xe4}, Stack + 32, {}},
      {"save_freg d9, 8", {0xdc, 0x41, 0xe4}, Stack, {}},
      {"save_freg_x d8, 16", {0xde, 0x01, 0xe4}, Stack + 16, {}},
      {"save_next after save_regp_x x19, 32", {0xe6, 0xcc, 0x03, 0xe4}, Stack + 32,
       {{X19, stackWord(0)}, {X20, stackWord(1)}, {X21, stackWord(2)}, {X22, stackWord(3)}}},
      {"save_any_reg x21 pair at +16", {0xe7, 0x55, 0x01, 0xe4}, Stack, {{X21, stackWord(2)}, {X22, stackWord(3)}}},
      {"nop, pac_sign_lr and end_c change nothing", {0xe3, 0xfc, 0xe5, 0xe4}, Stack, {{Pc, CalleeLr}}},
  };
  for (const Case &c : cases) {
    CAPTURE(c.name);
    fx.record({header(64, 0, uint32_t((c.codes.size() + 3) / 4))}, c.codes);
    fx.target.reset();
    UnwindResult r = fx.unwind(40); // the body
    CHECK(r.caller.sp() == c.sp);
    for (auto [reg, value] : c.registers) CHECK(r.caller.get(reg) == value);
  }
}

TEST_CASE("arm64 unwind: set_fp and add_fp take the stack pointer from x29", "[arm64unwind]") {
  Fixture fx;
  fx.record({header(64, 0, 1)}, {0xe1, 0xe4});
  CHECK(fx.unwind(40).caller.sp() == CalleeFp);
  fx.record({header(64, 0, 1)}, {0xe2, 0x04, 0xe4});
  fx.target.reset();
  CHECK(fx.unwind(40).caller.sp() == CalleeFp - 32);
}

TEST_CASE("arm64 unwind: machine frames, saved contexts and unwound-to-call clearing give exact callers",
          "[arm64unwind]") {
  Fixture fx;
  SECTION("a machine frame: sp and pc at the stack pointer") {
    fx.record({header(64, 0, 1)}, {0xe9, 0xe4});
    UnwindResult r = fx.unwind(40);
    CHECK(r.caller.sp() == stackWord(0));
    CHECK(r.caller.pc() == stackWord(1));
    CHECK(r.callerIpIsExact);
  }
  SECTION("a CONTEXT at the stack pointer") {
    fx.record({header(64, 0, 1)}, {0xea, 0xe4});
    UnwindResult r = fx.unwind(40);
    CHECK(r.caller.get(0) == stackWord(1)); // X0 at 0x8
    CHECK(r.caller.get(X29) == stackWord(0xf0 / 8));
    CHECK(r.caller.sp() == stackWord(0x100 / 8));
    CHECK(r.caller.pc() == stackWord(0x108 / 8));
    CHECK(r.callerIpIsExact);
  }
  SECTION("clear_unwound_to_call: the caller's pc is lr itself") {
    fx.record({header(64, 0, 1)}, {0xec, 0xe4});
    UnwindResult r = fx.unwind(40);
    CHECK(r.caller.pc() == CalleeLr);
    CHECK(r.callerIpIsExact);
  }
}

TEST_CASE("arm64 unwind: what it refuses", "[arm64unwind]") {
  Fixture fx;
  SECTION("a version other than 0") {
    fx.record({header(64, 0, 1) | (1u << 18)}, {0xe4});
    CHECK_THAT(fx.refusal(40), Catch::Contains("version"));
  }
  SECTION("an unknown code") {
    fx.record({header(64, 0, 1)}, {0xfd, 0xe4});
    CHECK_THAT(fx.refusal(40), Catch::Contains("unknown unwind code"));
  }
  SECTION("save_next before a code that saves no pair") {
    fx.record({header(64, 0, 1)}, {0xe6, 0x03, 0xe4});
    CHECK_THAT(fx.refusal(40), Catch::Contains("save_next"));
  }
  SECTION("a save past x30") {
    fx.record({header(64, 0, 1)}, {0xe6, 0xe6, 0xe6, 0xe6, 0xe6, 0xe6, 0x24, 0xe4});
    fx.record({header(64, 0, 2)}, {0xe6, 0xe6, 0xe6, 0xe6, 0xe6, 0xe6, 0x24, 0xe4});
    CHECK_THAT(fx.refusal(40), Catch::Contains("past x30"));
  }
  SECTION("a saved register outside the dump") {
    fx.record({header(64, 0, 1)}, {0xc7, 0xff, 0x42, 0xe4}); // alloc_m beyond the stack, then a load
    CHECK_THAT(fx.refusal(40), Catch::Contains("not in the dump"));
  }
  SECTION("codes that run past their words") {
    fx.record({header(64, 0, 1)}, {0x03, 0x03, 0x03, 0xe0});
    CHECK_THAT(fx.refusal(40), Catch::Contains("past the end"));
  }
  SECTION("an .xdata outside the dump") { CHECK_THAT(fx.refusal(40, 0x9000), Catch::Contains("not readable")); }
  SECTION("packed data with the reserved flag") { CHECK_THAT(fx.refusal(40, 0x3), Catch::Contains("reserved")); }
}

// Packed unwind data: Flag, FunctionLength, RegF, RegI, H, CR, FrameSize.
uint32_t packed(unsigned flag, unsigned length, unsigned regF, unsigned regI, unsigned h, unsigned cr,
                unsigned frameSize) {
  return flag | (length << 2) | (regF << 13) | (regI << 16) | (h << 20) | (cr << 21) | (frameSize << 23);
}

TEST_CASE("arm64 packed data expands into the codes of its canonical prolog and epilog", "[arm64unwind][packed]") {
  SECTION("CR=3 (x29 chain), two integer registers, a 64-byte frame") {
    // stp x19, x20, [sp, #-16]!; stp x29, lr, [sp, #-48]!; mov x29, sp
    Arm64UnwindData data = expandPackedArm64(packed(1, 32, 0, 2, 0, 3, 4));
    CHECK(data.functionLength == 32);
    CHECK(data.codes == std::vector<uint8_t>{0xe1, 0x85, 0xcc, 0x01, 0xe4, 0x85, 0xcc, 0x01, 0xe4});
    CHECK(data.singleEpilogCodeIndex == 5u);
  }
  SECTION("CR=1 (lr saved, no chain), RegI=1: the stack moves first, then save_lrpair") {
    Arm64UnwindData data = expandPackedArm64(packed(1, 16, 0, 1, 0, 1, 1));
    CHECK(data.codes == std::vector<uint8_t>{0xd6, 0x00, 0x01, 0xe4, 0xd6, 0x00, 0x01, 0xe4});
  }
  SECTION("CR=0, RegI=3, RegF=1 (d8, d9), H: pairs, a single, floats, four nops, locals") {
    Arm64UnwindData data = expandPackedArm64(packed(1, 64, 1, 3, 1, 0, 10));
    // savsz = 3 + 2 + 8 homes = 13 -> 14 words; locals 20 - 14 = 6 words (48 bytes):
    // stp x19, x20, [sp, #-112]!; str x21, [sp, #16]; stp d8, d9, [sp, #24]; 4 x stp x0-x7; sub sp, sp, #48.
    // The epilog leaves out the homes' nops.
    CHECK(data.codes == std::vector<uint8_t>{0x03, 0xe3, 0xe3, 0xe3, 0xe3, 0xd8, 0x03, 0xd0, 0x82, 0xcc, 0x0d, 0xe4,
                                             0x03, 0xd8, 0x03, 0xd0, 0x82, 0xcc, 0x0d, 0xe4});
  }
  SECTION("CR=2: pac_sign_lr first, then as CR=3") {
    Arm64UnwindData data = expandPackedArm64(packed(1, 32, 0, 0, 0, 2, 2));
    CHECK(data.codes == std::vector<uint8_t>{0xe1, 0x83, 0xfc, 0xe4, 0x83, 0xfc, 0xe4});
  }
  SECTION("a fragment (Flag 2): no prolog, no epilog") {
    Arm64UnwindData data = expandPackedArm64(packed(2, 32, 0, 2, 0, 3, 4));
    CHECK(data.codes == std::vector<uint8_t>{0xe5, 0xe1, 0x85, 0xcc, 0x01, 0xe4});
    CHECK_FALSE(data.singleEpilogCodeIndex);
  }
}

TEST_CASE("arm64 packed data unwinds its body, prolog and epilog", "[arm64unwind][packed]") {
  Fixture fx;
  fx.build();
  uint32_t word = packed(1, 32, 0, 2, 0, 3, 4); // the 64-byte CR=3 frame above
  SECTION("the body: from x29") {
    Frame body = fx.frame(10, Stack);
    body.regs.set(X29, Stack);
    RuntimeFunction function{uint32_t(FunctionRva), uint32_t(FunctionRva + 128), word};
    UnwindResult r = take(unwindArm64Windows(*fx.target, Base, function, body));
    CHECK(r.caller.get(X29) == stackWord(0));
    CHECK(r.caller.pc() == stackWord(1));
    CHECK(r.caller.get(X19) == stackWord(6));
    CHECK(r.caller.get(X20) == stackWord(7));
    CHECK(r.caller.sp() == Stack + 64);
  }
  SECTION("after the first prolog instruction") {
    UnwindResult r = fx.unwind(1, word);
    CHECK(r.caller.get(X19) == stackWord(0));
    CHECK(r.caller.pc() == CalleeLr);
    CHECK(r.caller.sp() == Stack + 16);
  }
  SECTION("the epilog's ret, the last instruction") {
    UnwindResult r = fx.unwind(31, word);
    CHECK(r.caller.pc() == CalleeLr);
    CHECK(r.caller.sp() == Stack);
  }
}

TEST_CASE("arm64 unwind: a frame without a RUNTIME_FUNCTION is a leaf only when interrupted", "[arm64unwind]") {
  Fixture fx;
  fx.build();
  UnwindResult r = unwindArm64Leaf(fx.frame(3));
  REQUIRE(r.status == Status::Caller);
  CHECK(r.caller.pc() == CalleeLr);
  CHECK(r.caller.sp() == Stack);
  Frame caller = fx.frame(3);
  caller.ipIsExact = false;
  CHECK(unwindArm64Leaf(caller).status == Status::NoInfo);
}
