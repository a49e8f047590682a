#include "CfaGnuRewrite.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/Support/LEB128.h" // encoders only

using namespace llvm::dwarf;

namespace stackwalk {
namespace {

constexpr uint8_t GnuNegativeOffsetExtended = 0x2f;

class Reader {
public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  size_t at() const { return at_; }
  bool failed() const { return failed_; }
  uint8_t byte() {
    if (done()) return failed_ = true, 0;
    return bytes_[at_++];
  }
  // Decoded by hand: LLVM's decoder shifts past 63 bits (undefined
  // behaviour) on over-long encodings.
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0;; shift += 7) {
      if (done() || shift > 63) return failed_ = true, 0;
      uint8_t b = bytes_[at_++];
      uint64_t slice = b & 0x7f;
      if (shift == 63 && slice > 1) return failed_ = true, 0;
      value |= slice << shift;
      if (!(b & 0x80)) return value;
    }
  }
  // Steps over a SLEB128 without decoding it (LLVM's decoder shifts past 63
  // bits, undefined behaviour, on over-long encodings).
  void skipSleb() {
    while (!done() && (bytes_[at_] & 0x80)) ++at_;
    if (done()) failed_ = true;
    else ++at_;
  }
  void skip(uint64_t n) {
    if (n > bytes_.size() - at_) failed_ = true;
    else at_ += n;
  }

private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool failed_ = false;
};

// Steps over one instruction's operands; false for an opcode we do not know.
bool skipOperands(uint8_t opcode, Reader &in, unsigned addressSize) {
  switch (opcode & 0xc0) {
  case DW_CFA_advance_loc: case DW_CFA_restore: return true;
  case DW_CFA_offset: in.uleb(); return true;
  }
  switch (opcode) {
  case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state: case DW_CFA_GNU_window_save:
    return true;
  case DW_CFA_set_loc: in.skip(addressSize); return true;
  case DW_CFA_advance_loc1: in.skip(1); return true;
  case DW_CFA_advance_loc2: in.skip(2); return true;
  case DW_CFA_advance_loc4: in.skip(4); return true;
  case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
  case DW_CFA_def_cfa_register: case DW_CFA_def_cfa_offset: case DW_CFA_GNU_args_size:
    in.uleb();
    return true;
  case DW_CFA_offset_extended: case DW_CFA_register: case DW_CFA_def_cfa: case DW_CFA_val_offset:
  case GnuNegativeOffsetExtended:
    in.uleb();
    in.uleb();
    return true;
  case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa_sf: case DW_CFA_val_offset_sf:
    in.uleb();
    in.skipSleb();
    return true;
  case DW_CFA_def_cfa_offset_sf: in.skipSleb(); return true;
  case DW_CFA_def_cfa_expression: in.skip(in.uleb()); return true;
  case DW_CFA_expression: case DW_CFA_val_expression:
    in.uleb();
    in.skip(in.uleb());
    return true;
  default: return false;
  }
}

} // namespace

std::optional<std::vector<uint8_t>> rewriteGnuNegativeOffsets(std::span<const uint8_t> program,
                                                               unsigned addressSize) {
  std::vector<uint8_t> out;
  bool rewrote = false;
  Reader in(program);
  while (!in.done()) {
    size_t start = in.at();
    uint8_t opcode = in.byte();
    if (opcode == GnuNegativeOffsetExtended) {
      uint64_t reg = in.uleb();
      uint64_t offset = in.uleb();
      if (in.failed() || offset > uint64_t(INT64_MAX)) return std::nullopt;
      out.push_back(DW_CFA_offset_extended_sf);
      uint8_t buffer[32];
      unsigned n = llvm::encodeULEB128(reg, buffer);
      n += llvm::encodeSLEB128(-int64_t(offset), buffer + n);
      out.insert(out.end(), buffer, buffer + n);
      rewrote = true;
      continue;
    }
    if (!skipOperands(opcode, in, addressSize) || in.failed()) return std::nullopt;
    out.insert(out.end(), program.begin() + start, program.begin() + in.at());
  }
  if (!rewrote) return std::nullopt;
  return out;
}

} // namespace stackwalk
