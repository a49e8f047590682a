#include "stackwalk/unwinder/DwarfExpression.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Support/DataExtractor.h"

using namespace llvm;

namespace stackwalk {
namespace {

constexpr size_t MaxStackDepth = 1024;
constexpr size_t MaxSteps = 100000;

Error fail(const Twine &message) { return createStringError(inconvertibleErrorCode(), message); }

class Evaluator {
public:
  Evaluator(std::span<const uint8_t> expression, const DwarfExpressionContext &context)
      : data_(StringRef(reinterpret_cast<const char *>(expression.data()), expression.size()), true,
              uint8_t(context.addressSize)),
        context_(context) {}

  Expected<DwarfExpressionResult> run(std::span<const uint64_t> initialStack);

private:
  Error step(uint8_t op);
  Error push(uint64_t v) {
    if (stack_.size() >= MaxStackDepth) return fail("DWARF expression stack overflow");
    stack_.push_back(v);
    return Error::success();
  }
  Expected<uint64_t> pop() {
    if (stack_.empty()) return fail("DWARF expression stack underflow");
    uint64_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Expected<uint64_t> reg(uint64_t number) {
    std::optional<uint64_t> v = context_.registers ? context_.registers->get(unsigned(number)) : std::nullopt;
    if (number >= RegisterFile::Capacity || !v)
      return fail("register " + Twine(number) + " is not known in this frame");
    return *v;
  }
  Expected<uint64_t> load(uint64_t address, unsigned size) {
    if (!context_.memory || size == 0 || size > 8) return fail("memory is not readable here");
    uint8_t bytes[8] = {};
    if (!context_.memory->read(address, {bytes, size}))
      return fail("memory at 0x" + Twine::utohexstr(address) + " is not in the dump");
    uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) v |= uint64_t(bytes[i]) << (8 * i);
    return v;
  }
  Error binary(uint8_t op);
  Error jump(int16_t delta);

  DataExtractor data_;
  DataExtractor::Cursor cursor_{0};
  const DwarfExpressionContext &context_;
  std::vector<uint64_t> stack_;
  std::optional<DwarfExpressionResult> final_;
};

Error Evaluator::jump(int16_t delta) {
  uint64_t target = cursor_.tell() + delta;
  if (int64_t(cursor_.tell()) + delta < 0 || target > data_.size()) return fail("DWARF branch leaves the expression");
  consumeError(cursor_.takeError());
  cursor_ = DataExtractor::Cursor(target);
  return Error::success();
}

Error Evaluator::binary(uint8_t op) {
  auto b = pop();
  if (!b) return b.takeError();
  auto a = pop();
  if (!a) return a.takeError();
  uint64_t x = *a, y = *b, r = 0;
  switch (op) {
  case dwarf::DW_OP_and: r = x & y; break;
  case dwarf::DW_OP_or: r = x | y; break;
  case dwarf::DW_OP_xor: r = x ^ y; break;
  case dwarf::DW_OP_plus: r = x + y; break;
  case dwarf::DW_OP_minus: r = x - y; break;
  case dwarf::DW_OP_mul: r = x * y; break;
  case dwarf::DW_OP_div:
    if (y == 0) return fail("DWARF expression divides by zero");
    r = (int64_t(y) == -1) ? 0 - x : uint64_t(int64_t(x) / int64_t(y));
    break;
  case dwarf::DW_OP_mod:
    if (y == 0) return fail("DWARF expression divides by zero");
    r = x % y;
    break;
  case dwarf::DW_OP_shl: r = y >= 64 ? 0 : x << y; break;
  case dwarf::DW_OP_shr: r = y >= 64 ? 0 : x >> y; break;
  case dwarf::DW_OP_shra: r = uint64_t(int64_t(x) >> (y >= 64 ? 63 : y)); break;
  case dwarf::DW_OP_eq: r = x == y; break;
  case dwarf::DW_OP_ne: r = x != y; break;
  case dwarf::DW_OP_lt: r = int64_t(x) < int64_t(y); break;
  case dwarf::DW_OP_le: r = int64_t(x) <= int64_t(y); break;
  case dwarf::DW_OP_gt: r = int64_t(x) > int64_t(y); break;
  case dwarf::DW_OP_ge: r = int64_t(x) >= int64_t(y); break;
  }
  return push(r);
}

Error Evaluator::step(uint8_t op) {
  using namespace dwarf;
  if (op >= DW_OP_lit0 && op <= DW_OP_lit31) return push(op - DW_OP_lit0);
  if (op >= DW_OP_breg0 && op <= DW_OP_breg31) {
    int64_t offset = data_.getSLEB128(cursor_);
    auto v = reg(op - DW_OP_breg0);
    if (!v) return v.takeError();
    return push(*v + offset);
  }
  if (op >= DW_OP_reg0 && op <= DW_OP_reg31) {
    final_ = DwarfExpressionResult{DwarfExpressionResult::Kind::Register, uint64_t(op - DW_OP_reg0)};
    return Error::success();
  }
  switch (op) {
  case DW_OP_addr: return push(data_.getAddress(cursor_));
  case DW_OP_const1u: return push(data_.getU8(cursor_));
  case DW_OP_const1s: return push(uint64_t(int64_t(int8_t(data_.getU8(cursor_)))));
  case DW_OP_const2u: return push(data_.getU16(cursor_));
  case DW_OP_const2s: return push(uint64_t(int64_t(int16_t(data_.getU16(cursor_)))));
  case DW_OP_const4u: return push(data_.getU32(cursor_));
  case DW_OP_const4s: return push(uint64_t(int64_t(int32_t(data_.getU32(cursor_)))));
  case DW_OP_const8u:
  case DW_OP_const8s: return push(data_.getU64(cursor_));
  case DW_OP_constu: return push(data_.getULEB128(cursor_));
  case DW_OP_consts: return push(uint64_t(data_.getSLEB128(cursor_)));
  case DW_OP_dup:
    if (stack_.empty()) return fail("DWARF expression stack underflow");
    return push(stack_.back());
  case DW_OP_drop: return pop().takeError();
  case DW_OP_over:
    if (stack_.size() < 2) return fail("DWARF expression stack underflow");
    return push(stack_[stack_.size() - 2]);
  case DW_OP_pick: {
    uint8_t index = data_.getU8(cursor_);
    if (index >= stack_.size()) return fail("DW_OP_pick beyond the stack");
    return push(stack_[stack_.size() - 1 - index]);
  }
  case DW_OP_swap:
    if (stack_.size() < 2) return fail("DWARF expression stack underflow");
    std::swap(stack_[stack_.size() - 1], stack_[stack_.size() - 2]);
    return Error::success();
  case DW_OP_rot:
    if (stack_.size() < 3) return fail("DWARF expression stack underflow");
    std::rotate(stack_.end() - 3, stack_.end() - 1, stack_.end());
    return Error::success();
  case DW_OP_deref:
  case DW_OP_deref_size: {
    unsigned size = op == DW_OP_deref ? context_.addressSize : data_.getU8(cursor_);
    auto address = pop();
    if (!address) return address.takeError();
    auto v = load(*address, size);
    if (!v) return v.takeError();
    return push(*v);
  }
  case DW_OP_abs: {
    auto v = pop();
    if (!v) return v.takeError();
    return push(int64_t(*v) < 0 ? 0 - *v : *v); // unsigned: abs(INT64_MIN) wraps as DWARF consumers do
  }
  case DW_OP_neg: {
    auto v = pop();
    if (!v) return v.takeError();
    return push(0 - *v);
  }
  case DW_OP_not: {
    auto v = pop();
    if (!v) return v.takeError();
    return push(~*v);
  }
  case DW_OP_plus_uconst: {
    uint64_t addend = data_.getULEB128(cursor_);
    auto v = pop();
    if (!v) return v.takeError();
    return push(*v + addend);
  }
  case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus: case DW_OP_minus:
  case DW_OP_mul: case DW_OP_div: case DW_OP_mod: case DW_OP_shl: case DW_OP_shr:
  case DW_OP_shra: case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_le:
  case DW_OP_gt: case DW_OP_ge:
    return binary(op);
  case DW_OP_skip: return jump(int16_t(data_.getU16(cursor_)));
  case DW_OP_bra: {
    int16_t delta = int16_t(data_.getU16(cursor_));
    auto v = pop();
    if (!v) return v.takeError();
    return *v ? jump(delta) : Error::success();
  }
  case DW_OP_regx:
    final_ = DwarfExpressionResult{DwarfExpressionResult::Kind::Register, data_.getULEB128(cursor_)};
    return Error::success();
  case DW_OP_bregx: {
    uint64_t number = data_.getULEB128(cursor_);
    int64_t offset = data_.getSLEB128(cursor_);
    auto v = reg(number);
    if (!v) return v.takeError();
    return push(*v + offset);
  }
  case DW_OP_fbreg: {
    int64_t offset = data_.getSLEB128(cursor_);
    if (!context_.frameBase) return fail("DW_OP_fbreg without a frame base");
    return push(*context_.frameBase + offset);
  }
  case DW_OP_call_frame_cfa:
    if (!context_.cfa) return fail("DW_OP_call_frame_cfa without a CFA");
    return push(*context_.cfa);
  case DW_OP_stack_value: {
    auto v = pop();
    if (!v) return v.takeError();
    final_ = DwarfExpressionResult{DwarfExpressionResult::Kind::Value, *v};
    return Error::success();
  }
  case DW_OP_nop: return Error::success();
  default:
    return fail("unsupported DWARF operation 0x" + Twine::utohexstr(op));
  }
}

Expected<DwarfExpressionResult> Evaluator::run(std::span<const uint64_t> initialStack) {
  for (uint64_t v : initialStack)
    if (Error err = push(v)) return std::move(err);
  for (size_t steps = 0; cursor_.tell() < data_.size(); ++steps) {
    if (steps >= MaxSteps) return fail("DWARF expression runs too long (a loop?)");
    uint8_t op = data_.getU8(cursor_);
    if (Error err = step(op)) {
      consumeError(cursor_.takeError());
      return std::move(err);
    }
    if (!cursor_) return fail("DWARF expression is truncated: " + toString(cursor_.takeError()));
    if (final_) {
      if (cursor_.tell() < data_.size()) return fail("operations after a location description's end");
      return *final_;
    }
  }
  if (!cursor_) return fail("DWARF expression is truncated: " + toString(cursor_.takeError()));
  auto top = pop();
  if (!top) return top.takeError();
  return DwarfExpressionResult{DwarfExpressionResult::Kind::Address, *top};
}

} // namespace

Expected<DwarfExpressionResult> evaluateDwarfExpression(std::span<const uint8_t> expression,
                                                        const DwarfExpressionContext &context,
                                                        std::span<const uint64_t> initialStack) {
  return Evaluator(expression, context).run(initialStack);
}

} // namespace stackwalk
