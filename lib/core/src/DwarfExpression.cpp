#include "stackwalk/core/DwarfExpression.h"

#include "stackwalk/core/Fail.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Support/DataExtractor.h"

#include <algorithm>
#include <utility>

using namespace llvm;

namespace stackwalk {
namespace {

constexpr size_t MaxStackDepth = 1024;
constexpr size_t MaxSteps = 100000;

// GNU's pre-DWARF 5 spellings of DWARF 5 operations that GCC still emits
// (GCC's dwarf2.def); LLVM 19's Dwarf.def does not name them.
enum GnuOperation : uint8_t {
  DW_OP_GNU_implicit_pointer = 0xf2,
  DW_OP_GNU_const_type = 0xf4,
  DW_OP_GNU_regval_type = 0xf5,
  DW_OP_GNU_deref_type = 0xf6,
  DW_OP_GNU_convert = 0xf7,
  DW_OP_GNU_reinterpret = 0xf9,
};

DwarfLocationPiece locationOf(DwarfLocationPiece::Kind kind, uint64_t value = 0) {
  DwarfLocationPiece piece;
  piece.kind = kind;
  piece.value = value;
  return piece;
}

class Evaluator {
public:
  Evaluator(std::span<const uint8_t> expression, const DwarfExpressionContext &context)
      : data_(StringRef(reinterpret_cast<const char *>(expression.data()), expression.size()), true,
              uint8_t(context.addressSize)),
        context_(context) {}

  Expected<DwarfLocation> run(std::span<const uint64_t> initialStack);

private:
  Error step(uint8_t op);
  Error locationStep(uint8_t op);
  Error typedStep(uint8_t op);
  Error endLocation(DwarfLocationPiece piece);
  void finishPiece(std::optional<uint64_t> sizeInBits, uint64_t bitOffset);
  DwarfLocationPiece currentPiece();
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
  std::optional<DwarfLocationPiece> ended_; // a register, value or implicit location: only a piece may follow
  DwarfLocation pieces_;
};

Error Evaluator::endLocation(DwarfLocationPiece piece) {
  ended_ = std::move(piece);
  return Error::success();
}

// The location the operations so far describe: an ended one, else the
// address on top of the stack, else nothing (an empty location).
DwarfLocationPiece Evaluator::currentPiece() {
  if (ended_) return *std::exchange(ended_, std::nullopt);
  DwarfLocationPiece piece;
  if (!stack_.empty()) {
    piece.kind = DwarfLocationPiece::Kind::Memory;
    piece.value = stack_.back();
  }
  return piece;
}

void Evaluator::finishPiece(std::optional<uint64_t> sizeInBits, uint64_t bitOffset) {
  DwarfLocationPiece piece = currentPiece();
  piece.sizeInBits = sizeInBits;
  piece.bitOffset = bitOffset;
  pieces_.push_back(std::move(piece));
  stack_.clear(); // each piece's location is described on its own
}

// Operations that end a location description or split it into pieces.
Error Evaluator::locationStep(uint8_t op) {
  using namespace dwarf;
  using Kind = DwarfLocationPiece::Kind;
  if (op >= DW_OP_reg0 && op <= DW_OP_reg31) return endLocation(locationOf(Kind::Register, op - DW_OP_reg0));
  switch (op) {
  case DW_OP_regx: return endLocation(locationOf(Kind::Register, data_.getULEB128(cursor_)));
  case DW_OP_stack_value: {
    auto v = pop();
    if (!v) return v.takeError();
    return endLocation(locationOf(Kind::Value, *v));
  }
  case DW_OP_implicit_value: {
    uint64_t length = data_.getULEB128(cursor_);
    if (length > data_.size()) return fail("DW_OP_implicit_value is longer than its expression");
    DwarfLocationPiece piece = locationOf(Kind::ImplicitValue);
    piece.bytes.resize(length);
    data_.getU8(cursor_, piece.bytes.data(), uint32_t(length));
    return endLocation(std::move(piece));
  }
  case DW_OP_implicit_pointer:
  case DW_OP_GNU_implicit_pointer:
    data_.getUnsigned(cursor_, context_.offsetSize == 8 ? 8 : 4); // the DIE of the object pointed to
    data_.getSLEB128(cursor_);
    return endLocation(locationOf(Kind::ImplicitPointer));
  case DW_OP_piece:
    finishPiece(data_.getULEB128(cursor_) * 8, 0);
    return Error::success();
  case DW_OP_bit_piece: {
    uint64_t size = data_.getULEB128(cursor_);
    finishPiece(size, data_.getULEB128(cursor_));
    return Error::success();
  }
  }
  return fail("unsupported DWARF operation 0x" + Twine::utohexstr(op));
}

// Operations of the typed DWARF stack (DWARF 5 section 2.5.1.6). The stack
// here is untyped: a value is kept as its bits, which is right for integer
// base types; a conversion between types is not attempted.
Error Evaluator::typedStep(uint8_t op) {
  using namespace dwarf;
  switch (op) {
  case DW_OP_regval_type:
  case DW_OP_GNU_regval_type: {
    uint64_t number = data_.getULEB128(cursor_);
    data_.getULEB128(cursor_); // the base type
    auto v = reg(number);
    if (!v) return v.takeError();
    return push(*v);
  }
  case DW_OP_deref_type:
  case DW_OP_GNU_deref_type: {
    unsigned size = data_.getU8(cursor_);
    data_.getULEB128(cursor_);
    auto address = pop();
    if (!address) return address.takeError();
    auto v = load(*address, size);
    if (!v) return v.takeError();
    return push(*v);
  }
  case DW_OP_const_type:
  case DW_OP_GNU_const_type: {
    data_.getULEB128(cursor_);
    unsigned size = data_.getU8(cursor_);
    if (size == 0 || size > 8) return fail("a typed constant wider than 8 bytes");
    uint8_t bytes[8] = {};
    data_.getU8(cursor_, bytes, size);
    uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) v |= uint64_t(bytes[i]) << (8 * i);
    return push(v);
  }
  case DW_OP_convert:
  case DW_OP_GNU_convert:
  case DW_OP_reinterpret:
  case DW_OP_GNU_reinterpret:
    // Type 0 is the generic type: the bits stay as they are.
    if (data_.getULEB128(cursor_) != 0) return fail("DWARF type conversions are not evaluated");
    return Error::success();
  }
  return fail("unsupported DWARF operation 0x" + Twine::utohexstr(op));
}

Error Evaluator::jump(int16_t delta) {
  if (!cursor_) return Error::success(); // a truncated operand: the caller reports it
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
  switch (op) {
  case DW_OP_addr: return push(data_.getAddress(cursor_) + context_.loadBias);
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
  case DW_OP_entry_value:
  case DW_OP_GNU_entry_value: {
    uint64_t length = data_.getULEB128(cursor_);
    if (!cursor_) return Error::success(); // the caller reports the truncation
    uint64_t start = cursor_.tell();
    if (length > data_.size() - start) return fail("DW_OP_entry_value is longer than its expression");
    if (!context_.entryValue) return fail("DW_OP_entry_value needs the caller's call site");
    cursor_ = DataExtractor::Cursor(start + length);
    auto v = context_.entryValue({reinterpret_cast<const uint8_t *>(data_.getData().data()) + start, size_t(length)});
    if (!v) return v.takeError();
    return push(*v);
  }
  case DW_OP_addrx:
  case DW_OP_constx:
  case DW_OP_GNU_addr_index:
  case DW_OP_GNU_const_index: {
    uint64_t index = data_.getULEB128(cursor_);
    std::optional<uint64_t> v = context_.indexedAddress ? context_.indexedAddress(index) : std::nullopt;
    if (!v) return fail(".debug_addr has no entry " + Twine(index));
    return push(op == DW_OP_constx || op == DW_OP_GNU_const_index ? *v : *v + context_.loadBias);
  }
  case DW_OP_nop: return Error::success();
  case DW_OP_regval_type: case DW_OP_GNU_regval_type: case DW_OP_deref_type: case DW_OP_GNU_deref_type:
  case DW_OP_const_type: case DW_OP_GNU_const_type: case DW_OP_convert: case DW_OP_GNU_convert:
  case DW_OP_reinterpret: case DW_OP_GNU_reinterpret:
    return typedStep(op);
  default:
    return locationStep(op);
  }
}

Expected<DwarfLocation> Evaluator::run(std::span<const uint64_t> initialStack) {
  for (uint64_t v : initialStack)
    if (Error err = push(v)) return err;
  for (size_t steps = 0; cursor_.tell() < data_.size(); ++steps) {
    if (steps >= MaxSteps) return fail("DWARF expression runs too long (a loop?)");
    uint8_t op = data_.getU8(cursor_);
    if (ended_ && op != dwarf::DW_OP_piece && op != dwarf::DW_OP_bit_piece)
      return fail("operations after a location description's end");
    if (Error err = step(op)) {
      consumeError(cursor_.takeError());
      return err;
    }
    if (!cursor_) return fail("DWARF expression is truncated: " + toString(cursor_.takeError()));
  }
  if (!cursor_) return fail("DWARF expression is truncated: " + toString(cursor_.takeError()));
  if (pieces_.empty()) pieces_.push_back(currentPiece());
  return std::move(pieces_);
}

} // namespace

Expected<DwarfExpressionResult> evaluateDwarfExpression(std::span<const uint8_t> expression,
                                                        const DwarfExpressionContext &context,
                                                        std::span<const uint64_t> initialStack) {
  auto location = Evaluator(expression, context).run(initialStack);
  if (!location) return location.takeError();
  if (location->size() != 1 || location->front().sizeInBits)
    return fail("a location in pieces where one value is expected");
  const DwarfLocationPiece &piece = location->front();
  using Kind = DwarfLocationPiece::Kind;
  switch (piece.kind) {
  case Kind::Memory: return DwarfExpressionResult{DwarfExpressionResult::Kind::Address, piece.value};
  case Kind::Register: return DwarfExpressionResult{DwarfExpressionResult::Kind::Register, piece.value};
  case Kind::Value: return DwarfExpressionResult{DwarfExpressionResult::Kind::Value, piece.value};
  case Kind::Empty: return fail("DWARF expression stack underflow");
  default: return fail("an implicit location where one value is expected");
  }
}

Expected<DwarfLocation> evaluateDwarfLocation(std::span<const uint8_t> expression,
                                              const DwarfExpressionContext &context) {
  return Evaluator(expression, context).run({});
}

} // namespace stackwalk
