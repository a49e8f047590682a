#include "SyntheticStack.h"

#include "stackwalk/unwinder/ArmEhabi.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr unsigned R4 = 4, R5 = 5, R7 = 7, R11 = 11, Lr = 14;
constexpr uint64_t Stack = 0x7000, Table = 0x10000, Extab = 0x11000;

std::vector<uint8_t> words(std::vector<uint32_t> values) {
  std::vector<uint8_t> out(values.size() * 4);
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A prel31 word at `at` that points to `target`.
uint32_t prel31(uint64_t at, uint64_t target) { return uint32_t(target - at) & 0x7fffffff; }

RegisterFile calleeAt(uint64_t sp, uint64_t lr) {
  RegisterFile regs(Arch::Arm);
  regs.setSp(sp);
  regs.set(Lr, lr);
  regs.setPc(0x2010);
  regs.set(R4, 0x4444);
  regs.set(R11, 0xbbbb);
  regs.set(0, 0x1234); // r0: not preserved for the caller
  return regs;
}

llvm::Expected<RegisterFile> run(std::vector<uint8_t> opcodes, const RegisterFile &callee, std::vector<uint32_t> stack) {
  auto memory = makeMemory({{Stack, words(std::move(stack))}});
  return executeArmUnwind(opcodes, callee, *memory);
}

} // namespace

TEST_CASE("EHABI instructions: vsp moves, pops under masks and ranges, pc from lr or popped") {
  SECTION("pop {r4, lr} (0xa8); finish: pc is the popped lr") {
    auto caller = run({0xa8, 0xb0}, calleeAt(Stack, 0x9999), {0x1111, 0x3001});
    REQUIRE(bool(caller));
    CHECK(caller->get(R4) == 0x1111u);
    CHECK(caller->pc() == 0x3001u); // the Thumb bit stays: the walker reads it
    CHECK(caller->sp() == Stack + 8);
    CHECK(caller->get(R11) == 0xbbbbu); // callee-saved, not popped: kept
    CHECK_FALSE(caller->get(0));        // r0 is the callee's
  }
  SECTION("vsp += 16 (0x03), then pop r4-r7 (0xa3): pc is lr, unpopped") {
    auto caller = run({0x03, 0xa3}, calleeAt(Stack, 0x5555), {0, 0, 0, 0, 4, 5, 6, 7});
    REQUIRE(bool(caller));
    CHECK(caller->get(R7) == 7u);
    CHECK(caller->pc() == 0x5555u);
    CHECK(caller->sp() == Stack + 32);
  }
  SECTION("pop {r4, r5, fp, pc} under mask (0x88 0x83), vsp -= 4 first (0x40)") {
    auto caller = run({0x40, 0x88, 0x83}, calleeAt(Stack + 4, 0x5555), {0xa4, 0xa5, 0xab, 0x2001});
    REQUIRE(bool(caller));
    CHECK(caller->get(R5) == 0xa5u);
    CHECK(caller->get(R11) == 0xabu);
    CHECK(caller->pc() == 0x2001u);
    CHECK(caller->sp() == Stack + 16);
  }
  SECTION("vsp = r7 (0x97), pop r0-r3 under mask (0xb1 0x01), VFP d8-d9 (0xd1) as space") {
    RegisterFile callee = calleeAt(0x100, 0x5555);
    callee.set(R7, Stack);
    auto caller = run({0x97, 0xb1, 0x01, 0xd1}, callee, {0x77, 0, 0, 0, 0});
    REQUIRE(bool(caller));
    CHECK(caller->get(0) == 0x77u);
    CHECK(caller->sp() == Stack + 4 + 16);
  }
  SECTION("vsp += 0x204 + (uleb128 << 2) (0xb2 0x01)") {
    auto caller = run({0xb2, 0x01}, calleeAt(Stack, 0x5555), {});
    REQUIRE(bool(caller));
    CHECK(caller->sp() == Stack + 0x204 + 4);
  }
  SECTION("VFP and iWMMXt registers popped as stack space only, each its size") {
    // (opcodes, bytes): FSTMFDX adds a word to the doubles it saves (ARM EHABI 9.3).
    const std::vector<std::pair<std::vector<uint8_t>, uint64_t>> cases = {
        {{0xb3, 0x12}, 3 * 8 + 4}, // FSTMFDX d1-d3
        {{0xb9}, 2 * 8 + 4},       // FSTMFDX d8-d9
        {{0xc8, 0x21}, 2 * 8},     // VPUSH d18-d19
        {{0xc9, 0x03}, 4 * 8},     // VPUSH d0-d3
        {{0xc1}, 2 * 8},           // wR10-wR11
        {{0xc6, 0x12}, 3 * 8},     // wR1-wR3
        {{0xc7, 0x05}, 2 * 4},     // wCGR0 and wCGR2
    };
    for (const auto &[opcodes, bytes] : cases) {
      std::vector<uint8_t> program = opcodes;
      program.push_back(0xb0);
      auto caller = run(program, calleeAt(Stack, 0x5555), std::vector<uint32_t>(16, 0));
      REQUIRE(bool(caller));
      CHECK(caller->sp() == Stack + bytes);
      CHECK(caller->pc() == 0x5555u);
    }
  }
  SECTION("refuse to unwind (0x80 0x00), reserved (0x9d), spare (0xb4), a pop past the dump") {
    // ... and wCGR under an empty mask or one past wCGR3 (0xc7 0x00, 0xc7 0x10), 0xc6 cut short
    for (std::vector<uint8_t> opcodes :
         {std::vector<uint8_t>{0x80, 0x00}, std::vector<uint8_t>{0x9d}, std::vector<uint8_t>{0xb4},
          std::vector<uint8_t>{0x05, 0xa8}, std::vector<uint8_t>{0xc7, 0x00}, std::vector<uint8_t>{0xc7, 0x10},
          std::vector<uint8_t>{0xc6}}) {
      auto caller = run(opcodes, calleeAt(Stack, 0x5555), {1, 2});
      CHECK_FALSE(bool(caller));
      if (!caller) llvm::consumeError(caller.takeError());
    }
  }
}

TEST_CASE("EHABI: the index table's entries, inline, in .ARM.extab, or EXIDX_CANTUNWIND") {
  // Functions at 0x2000 (inline: pop {r4, lr}), 0x2100 (compact model 1 in
  // extab with one more word), 0x2200 (cannot unwind), 0x2300 (a generic
  // personality whose instructions follow in model 1's form).
  std::vector<uint32_t> table = {
      prel31(Table, 0x2000),      0x80a8b0b0,
      prel31(Table + 8, 0x2100),  prel31(Table + 12, Extab),
      prel31(Table + 16, 0x2200), 0x1,
      prel31(Table + 24, 0x2301), prel31(Table + 28, Extab + 8), // a Thumb function's bit 0
  };
  std::vector<uint32_t> extab = {
      0x8101a803, 0xb0b0b0b0,    // model 1, one more word: 0xa8 0x03 | 0xb0 ...
      prel31(Extab + 8, 0x9000), // the personality routine
      0x00a9b0b0,                // no more words: pop {r4, r5, lr}; finish
  };
  auto memory = makeMemory({{Table, words(table)}, {Extab, words(extab)}});
  uint64_t size = table.size() * 4;

  auto inlined = findArmUnwindEntry(*memory, Table, size, 0x2050);
  REQUIRE(inlined);
  CHECK(inlined->functionStart == 0x2000u);
  CHECK(inlined->opcodes == std::vector<uint8_t>{0xa8, 0xb0, 0xb0});

  auto model1 = findArmUnwindEntry(*memory, Table, size, 0x2100);
  REQUIRE(model1);
  CHECK(model1->personality == "compact model 1");
  CHECK(model1->opcodes == std::vector<uint8_t>{0xa8, 0x03, 0xb0, 0xb0, 0xb0, 0xb0});

  auto cannot = findArmUnwindEntry(*memory, Table, size, 0x2280);
  REQUIRE(cannot);
  CHECK(cannot->cannotUnwind);

  auto generic = findArmUnwindEntry(*memory, Table, size, 0x2310);
  REQUIRE(generic);
  CHECK(generic->functionStart == 0x2300u);
  CHECK(generic->personality == "generic personality at 0x9000");
  CHECK(generic->opcodes == std::vector<uint8_t>{0xa9, 0xb0, 0xb0});

  CHECK_FALSE(findArmUnwindEntry(*memory, Table, size, 0x1fff)); // before the first function
  CHECK_FALSE(findArmUnwindEntry(*memory, Table, size + 8, 0x9000)); // the table runs past the dump

  CHECK(describeArmUnwind(generic->opcodes) == std::vector<std::string>{"0xa9  pop {r4, r5, lr}", "0xb0  finish"});
}
