#include "stackwalk/core/DwarfExpression.h"

#include "llvm/BinaryFormat/Dwarf.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace llvm::dwarf;

namespace {

struct Env {
  BufferMemory memory;
  RegisterFile regs{Arch::X86_64};
  DwarfExpressionContext context;
  Env() {
    memory.add(0x1000, {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11});
    regs.set(7, 0x1000); // rsp
    context.memory = &memory;
    context.registers = &regs;
    context.cfa = 0x2000;
  }
  llvm::Expected<DwarfExpressionResult> eval(std::vector<uint8_t> ops, std::vector<uint64_t> initial = {}) {
    return evaluateDwarfExpression(ops, context, initial);
  }
};

std::string errorOf(llvm::Expected<DwarfExpressionResult> result) {
  if (result) return "";
  return llvm::toString(result.takeError());
}

} // namespace

TEST_CASE("arithmetic and stack operations") {
  Env env;
  auto r = env.eval({DW_OP_lit5, DW_OP_lit3, DW_OP_minus, DW_OP_const1s, 0xfe, DW_OP_mul}); // (5-3)*-2
  REQUIRE(bool(r));
  CHECK(int64_t(r->value) == -4);
  r = env.eval({DW_OP_lit1, DW_OP_lit2, DW_OP_lit3, DW_OP_rot, DW_OP_drop, DW_OP_drop}); // rot: 3 1 2
  REQUIRE(bool(r));
  CHECK(r->value == 3);
  r = env.eval({DW_OP_constu, 0x80, 0x01, DW_OP_plus_uconst, 0x10, DW_OP_lit4, DW_OP_shr}); // (128+16)>>4
  REQUIRE(bool(r));
  CHECK(r->value == 9);
}

TEST_CASE("register-relative addresses and memory reads, as CFI rules use them") {
  Env env;
  auto r = env.eval({DW_OP_breg7, 0x00, DW_OP_deref});
  REQUIRE(bool(r));
  CHECK(r->kind == DwarfExpressionResult::Kind::Address);
  CHECK(r->value == 0x1122334455667788);
  r = env.eval({DW_OP_breg7, 0x04, DW_OP_deref_size, 2});
  REQUIRE(bool(r));
  CHECK(r->value == 0x3344);
  r = env.eval({DW_OP_lit8, DW_OP_plus}, {0x100}); // the CFA pushed first
  REQUIRE(bool(r));
  CHECK(r->value == 0x108);
  r = env.eval({DW_OP_call_frame_cfa});
  REQUIRE(bool(r));
  CHECK(r->value == 0x2000);
}

TEST_CASE("conditional branches and loops that end") {
  Env env;
  // counter = 3; do { counter -= 1 } while (counter); result 0
  auto r = env.eval({DW_OP_lit3, DW_OP_lit1, DW_OP_minus, DW_OP_dup, DW_OP_bra, 0xfa, 0xff});
  REQUIRE(bool(r));
  CHECK(r->value == 0);
  r = env.eval({DW_OP_skip, 0x01, 0x00, DW_OP_lit1, DW_OP_lit2}); // skips lit1
  REQUIRE(bool(r));
  CHECK(r->value == 2);
}

TEST_CASE("location kinds: a value, a register") {
  Env env;
  auto r = env.eval({DW_OP_lit7, DW_OP_stack_value});
  REQUIRE(bool(r));
  CHECK(r->kind == DwarfExpressionResult::Kind::Value);
  r = env.eval({DW_OP_reg3});
  REQUIRE(bool(r));
  CHECK(r->kind == DwarfExpressionResult::Kind::Register);
  CHECK(r->value == 3);
  r = env.eval({DW_OP_regx, 17});
  REQUIRE(bool(r));
  CHECK(r->value == 17);
}

TEST_CASE("hostile expressions end in errors, never hangs or crashes") {
  Env env;
  CHECK(errorOf(env.eval({DW_OP_skip, 0xfd, 0xff})) == "DWARF expression runs too long (a loop?)");
  CHECK(errorOf(env.eval({DW_OP_skip, 0x00, 0x10})) == "DWARF branch leaves the expression");
  // A branch whose 2-byte operand is cut: its one byte is not run as an operation (0x30 is DW_OP_lit0).
  CHECK(errorOf(env.eval({DW_OP_skip, 0x30})).starts_with("DWARF expression is truncated"));
  CHECK(errorOf(env.eval({DW_OP_lit1, DW_OP_bra, 0x30})).starts_with("DWARF expression is truncated"));
  std::vector<uint8_t> overflow(2000, DW_OP_lit1);
  CHECK(errorOf(env.eval(overflow)) == "DWARF expression stack overflow");
  CHECK(errorOf(env.eval({DW_OP_plus})) == "DWARF expression stack underflow");
  CHECK(errorOf(env.eval({DW_OP_breg5, 0})) == "register 5 is not known in this frame");
  CHECK(errorOf(env.eval({DW_OP_bregx, 0x80, 0x01, 0})) == "register 128 is not known in this frame");
  CHECK(errorOf(env.eval({DW_OP_lit0, DW_OP_deref})) == "memory at 0x0 is not in the dump");
  CHECK(errorOf(env.eval({DW_OP_lit1, DW_OP_lit0, DW_OP_div})) == "DWARF expression divides by zero");
  CHECK(errorOf(env.eval({DW_OP_const4u, 1, 2})).rfind("DWARF expression is truncated", 0) == 0);
  CHECK(errorOf(env.eval({0xe0})) == "unsupported DWARF operation 0xe0");
  CHECK(errorOf(env.eval({DW_OP_reg3, DW_OP_lit1})) == "operations after a location description's end");
  CHECK(errorOf(env.eval({DW_OP_fbreg, 8})) == "DW_OP_fbreg without a frame base");
}

TEST_CASE("abs, neg and div of INT64_MIN wrap, as unsigned arithmetic does (found by fuzz_dwarf_expression)") {
  Env env;
  const uint64_t min = uint64_t(1) << 63;
  for (uint8_t op : {DW_OP_abs, DW_OP_neg}) {
    auto r = env.eval({op}, {min});
    REQUIRE(bool(r));
    CHECK(r->value == min);
  }
  auto r = env.eval({DW_OP_const1s, 0xff, DW_OP_div}, {min}); // INT64_MIN / -1
  REQUIRE(bool(r));
  CHECK(r->value == min);
}

TEST_CASE("locations of variables: pieces, implicit values and pointers, entry values") {
  Env env;
  using Kind = DwarfLocationPiece::Kind;
  auto l = evaluateDwarfLocation(std::vector<uint8_t>{DW_OP_reg3, DW_OP_piece, 4, DW_OP_piece, 4, DW_OP_breg7, 8, DW_OP_piece, 8},
                                 env.context);
  REQUIRE(bool(l));
  REQUIRE(l->size() == 3);
  CHECK(((*l)[0].kind == Kind::Register && (*l)[0].value == 3 && (*l)[0].sizeInBits == 32u));
  CHECK(((*l)[1].kind == Kind::Empty && (*l)[1].sizeInBits == 32u)); // an optimized-out part
  CHECK(((*l)[2].kind == Kind::Memory && (*l)[2].value == 0x1008 && (*l)[2].sizeInBits == 64u));

  l = evaluateDwarfLocation(std::vector<uint8_t>{DW_OP_implicit_value, 2, 0xc7, 0x00}, env.context);
  REQUIRE(bool(l));
  CHECK((l->front().kind == Kind::ImplicitValue && l->front().bytes == std::vector<uint8_t>{0xc7, 0x00}));
  l = evaluateDwarfLocation(std::vector<uint8_t>{0xf2, 1, 2, 3, 4, 0}, env.context); // DW_OP_GNU_implicit_pointer
  REQUIRE(bool(l));
  CHECK(l->front().kind == Kind::ImplicitPointer);
  l = evaluateDwarfLocation(std::vector<uint8_t>{}, env.context);
  REQUIRE(bool(l));
  CHECK(l->front().kind == Kind::Empty);

  // DW_OP_entry_value(DW_OP_reg5) DW_OP_stack_value: what the caller passed in rdi.
  std::vector<uint8_t> entry{DW_OP_entry_value, 1, DW_OP_reg5, DW_OP_stack_value};
  CHECK(errorOf(evaluateDwarfExpression(entry, env.context)) == "DW_OP_entry_value needs the caller's call site");
  env.context.entryValue = [](std::span<const uint8_t> block) -> llvm::Expected<uint64_t> {
    if (block.size() == 1 && block[0] == DW_OP_reg5) return 199;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "not rdi");
  };
  l = evaluateDwarfLocation(entry, env.context);
  REQUIRE(bool(l));
  CHECK((l->front().kind == Kind::Value && l->front().value == 199));
}

TEST_CASE("addresses are relocated by the load bias; hostile location operands end in errors") {
  Env env;
  env.context.loadBias = 0x5000;
  auto r = env.eval({DW_OP_addr, 0x10, 0, 0, 0, 0, 0, 0, 0});
  REQUIRE(bool(r));
  CHECK(r->value == 0x5010);
  CHECK(errorOf(env.eval({DW_OP_addrx, 0})) == ".debug_addr has no entry 0");
  CHECK(errorOf(env.eval({DW_OP_implicit_value, 0x80, 0x80, 0x04})) == "DW_OP_implicit_value is longer than its expression");
  CHECK(errorOf(env.eval({DW_OP_entry_value, 9, DW_OP_reg5})) == "DW_OP_entry_value is longer than its expression");
  CHECK(errorOf(env.eval({DW_OP_lit1, DW_OP_convert, 0x2a})) == "DWARF type conversions are not evaluated");
  CHECK(errorOf(env.eval({DW_OP_reg3, DW_OP_piece, 4})) == "a location in pieces where one value is expected");
  CHECK(errorOf(env.eval({DW_OP_stack_value, DW_OP_lit1})) == "DWARF expression stack underflow");
}
