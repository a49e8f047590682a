#include "stackwalk/unwinder/Arm64WindowsUnwind.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include <algorithm>
#include <array>

using llvm::Error;
using llvm::Expected;

namespace stackwalk {
namespace {

constexpr unsigned X19 = 19, Fp = 29, Lr = 30, Sp = 31;
constexpr uint8_t End = 0xe4, EndChained = 0xe5, SaveNext = 0xe6, Nop = 0xe3, SetFp = 0xe1, PacSignLr = 0xfc;
constexpr size_t MaxCodeBytes = 31 * 4 + 255 * 4; // CodeWords: 5 bits, or 8 in the extended header
constexpr uint32_t MaxEpilogScopes = 0xffff;

// Bytes of the code that starts with `op` (0xe0-0xff per Microsoft's table).
unsigned codeLength(uint8_t op) {
  static constexpr uint8_t Long[32] = {4, 1, 2, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 1, 1, 1, 1};
  if (op < 0xc0) return 1;
  if (op < 0xe0) return 2;
  return Long[op - 0xe0];
}

// Instructions a code stands for: one, but none for the custom stack cases
// (trap, machine and context frames, 0xe8-0xf7).
unsigned codeInstructions(uint8_t op) { return op >= 0xe8 && op <= 0xf7 ? 0 : 1; }

bool isEnd(uint8_t op) { return op == End || op == EndChained; }

// Instructions in the scope whose codes start at `index`, up to its end code;
// an epilog has its `ret` besides.
uint32_t scopeInstructions(const std::vector<uint8_t> &codes, size_t index, bool epilog) {
  uint32_t count = 0;
  while (index < codes.size() && !isEnd(codes[index])) {
    count += codeInstructions(codes[index]);
    index += codeLength(codes[index]);
  }
  return count + (epilog ? 1 : 0);
}

} // namespace

Arm64Position arm64PositionOf(const Arm64UnwindData &data, uint32_t offset) {
  using Part = Arm64Position::Part;
  uint32_t prolog = scopeInstructions(data.codes, 0, false);
  if (offset < prolog) return {Part::Prolog, 0, prolog - offset};
  if (data.singleEpilogCodeIndex) {
    uint32_t size = scopeInstructions(data.codes, *data.singleEpilogCodeIndex, true);
    if (data.functionLength >= size && offset >= data.functionLength - size)
      return {Part::Epilog, *data.singleEpilogCodeIndex, offset - (data.functionLength - size)};
    return {};
  }
  for (const Arm64UnwindData::EpilogScope &epilog : data.epilogs) {
    if (offset < epilog.start) break;
    if (offset < epilog.start + scopeInstructions(data.codes, epilog.codeIndex, true))
      return {Part::Epilog, epilog.codeIndex, offset - epilog.start};
  }
  return {};
}

unsigned arm64CodeLength(uint8_t op) { return codeLength(op); }

namespace {

// The registers as the codes are executed, read through the dump.
class Execution {
public:
  Execution(const MemorySource &memory, const RegisterFile &callee) : memory_(memory), regs_(callee) {}

  Error run(const std::vector<uint8_t> &codes, Arm64Position start);
  RegisterFile &registers() { return regs_; }
  bool pcSet() const { return pcSet_; }

private:
  Error apply(const uint8_t *code);
  Expected<uint64_t> reg(unsigned n) const {
    if (auto v = regs_.get(n)) return *v;
    return fail("register x" + std::to_string(n) + " is unknown");
  }
  Error addSp(uint64_t amount);
  // Restores `count` registers from sp + offset; a negative offset is a
  // pre-indexed save: they are at sp, and sp moves up by -offset.
  Error restore(int64_t offset, unsigned first, unsigned count, bool integer);
  // A machine state saved at sp: x0 to x(integers - 1) from integersAt on, then
  // the others (register, offset); the pc it holds is an interrupted one.
  Error restoreSavedState(unsigned integers, uint64_t integersAt,
                          std::initializer_list<std::pair<unsigned, uint64_t>> others);

  const MemorySource &memory_;
  RegisterFile regs_;
  unsigned saveNexts_ = 0;
  bool pcSet_ = false;
};

Error Execution::run(const std::vector<uint8_t> &codes, Arm64Position start) {
  size_t i = start.codeIndex;
  for (uint32_t skipped = 0; skipped < start.skipped && i < codes.size() && !isEnd(codes[i]); ++skipped)
    i += codeLength(codes[i]);
  while (i < codes.size() && codes[i] != End) {
    if (i + codeLength(codes[i]) > codes.size()) return fail("an unwind code runs past the end of the codes");
    if (Error e = apply(&codes[i])) return e;
    i += codeLength(codes[i]);
  }
  if (saveNexts_) return fail("save_next without a register pair to extend");
  return Error::success();
}

Error Execution::addSp(uint64_t amount) {
  auto sp = reg(Sp);
  if (!sp) return sp.takeError();
  regs_.set(Sp, *sp + amount);
  return Error::success();
}

Error Execution::restore(int64_t offset, unsigned first, unsigned count, bool integer) {
  if (first + count > (integer ? 31u : 32u)) return fail("an unwind code restores registers past x30");
  auto sp = reg(Sp);
  if (!sp) return sp.takeError();
  uint64_t address = *sp + (offset > 0 ? offset : 0);
  for (unsigned i = 0; i < count; ++i) {
    auto value = memory_.readValue<uint64_t>(address + 8 * i);
    if (!value) return fail("the saved register at " + hex(address + 8 * i) + " is not in the dump");
    if (integer) regs_.set(first + i, *value); // d8-d15 are not tracked, only checked readable
  }
  if (offset < 0) regs_.set(Sp, *sp - offset);
  return Error::success();
}

Error Execution::restoreSavedState(unsigned integers, uint64_t integersAt,
                                   std::initializer_list<std::pair<unsigned, uint64_t>> others) {
  auto base = reg(Sp);
  if (!base) return base.takeError();
  auto load = [&](unsigned number, uint64_t offset) -> Error {
    auto value = memory_.readValue<uint64_t>(*base + offset);
    if (!value) return fail("the saved state at " + hex(*base) + " is not in the dump");
    regs_.set(number, *value);
    return Error::success();
  };
  for (unsigned n = 0; n < integers; ++n)
    if (Error e = load(n, integersAt + 8 * uint64_t(n))) return e;
  for (auto [number, offset] : others)
    if (Error e = load(number, offset)) return e;
  pcSet_ = true;
  return Error::success();
}

Error Execution::apply(const uint8_t *code) {
  uint8_t op = code[0], next = codeLength(op) > 1 ? code[1] : 0;
  unsigned pairs = 2 + 2 * saveNexts_;
  bool extendsPairs = (op >= 0x20 && op <= 0x3f) || (op >= 0xc8 && op <= 0xcf) || (op >= 0xd8 && op <= 0xdb) ||
                      op == 0xe7 || op == SaveNext || op == EndChained;
  if (saveNexts_ && !extendsPairs) return fail("save_next before a code that saves no register pair");
  auto done = [&](Error e) {
    if (op != SaveNext) saveNexts_ = 0;
    return e;
  };
  if (op <= 0x1f) return addSp(16 * uint64_t(op));                                 // alloc_s
  if (op <= 0x3f) return done(restore(-8 * int64_t(op & 0x1f), X19, pairs, true)); // save_r19r20_x
  if (op <= 0x7f) return restore(8 * int64_t(op & 0x3f), Fp, 2, true);             // save_fplr
  if (op <= 0xbf) return restore(-8 * (int64_t(op & 0x3f) + 1), Fp, 2, true);      // save_fplr_x
  if (op <= 0xc7) return addSp(16 * ((uint64_t(op & 7) << 8) | next));            // alloc_m
  unsigned x4 = ((op & 3) << 2) | (next >> 6); // a 4-bit register field across both bytes
  int64_t z6 = next & 0x3f;
  if (op <= 0xcb) return done(restore(8 * z6, X19 + x4, pairs, true));               // save_regp
  if (op <= 0xcf) return done(restore(-8 * (z6 + 1), X19 + x4, pairs, true));        // save_regp_x
  if (op <= 0xd3) return restore(8 * z6, X19 + x4, 1, true);                         // save_reg
  if (op <= 0xd5)                                                                     // save_reg_x
    return restore(-8 * (int64_t(next & 0x1f) + 1), X19 + (((op & 1) << 3) | (next >> 5)), 1, true);
  unsigned x3 = ((op & 1) << 2) | (next >> 6);
  if (op <= 0xd7) {                                                                   // save_lrpair
    if (Error e = restore(8 * z6, X19 + 2 * x3, 1, true)) return e;
    return restore(8 * z6 + 8, Lr, 1, true);
  }
  if (op <= 0xd9) return done(restore(8 * z6, 8 + x3, pairs, false));                // save_fregp
  if (op <= 0xdb) return done(restore(-8 * (z6 + 1), 8 + x3, pairs, false));         // save_fregp_x
  if (op <= 0xdd) return restore(8 * z6, 8 + x3, 1, false);                          // save_freg
  if (op == 0xde) return restore(-8 * (int64_t(next & 0x1f) + 1), 8 + (next >> 5), 1, false); // save_freg_x
  if (op == 0xdf) return fail("alloc_z (an SVE frame) is not supported");
  if (op == 0xe0) return addSp(16 * ((uint64_t(code[1]) << 16) | (uint64_t(code[2]) << 8) | code[3])); // alloc_l
  if (op == SetFp || op == 0xe2) {                                                    // set_fp, add_fp
    auto fp = reg(Fp);
    if (!fp) return fp.takeError();
    regs_.set(Sp, *fp - (op == 0xe2 ? 8 * uint64_t(next) : 0));
    return Error::success();
  }
  if (op == Nop || op == EndChained || op == PacSignLr) return Error::success(); // PAC is stripped by the walker
  if (op == SaveNext) {
    ++saveNexts_;
    return Error::success();
  }
  if (op == 0xe7) { // save_any_reg: 0pxrrrrr ffoooooo
    unsigned bits = (unsigned(code[1]) << 8) | code[2];
    bool pair = bits & 0x4000, writeback = bits & 0x2000;
    unsigned kind = (bits >> 6) & 3, first = (bits >> 8) & 0x1f;
    if (bits & 0x8000 || kind == 3 || (!pair && saveNexts_)) return fail("a malformed save_any_reg");
    int64_t offset = int64_t((bits & 0x3f) + writeback) * (writeback || pair || kind == 2 ? 16 : 8);
    return done(restore(writeback ? -offset : offset, first, 1 + pair + 2 * saveNexts_, kind == 0));
  }
  // The custom stack cases: a saved machine state at sp, whose pc is the interrupted one.
  if (op == 0xe9) return restoreSavedState(0, 0, {{32, 8}, {Sp, 0}}); // MSFT_OP_MACHINE_FRAME
  if (op == 0xea) // MSFT_OP_CONTEXT: an ARM64 CONTEXT
    return restoreSavedState(29, 8, {{Fp, 0xf0}, {Lr, 0xf8}, {32, 0x108}, {Sp, 0x100}});
  if (op == 0xe8) // MSFT_OP_TRAP_FRAME: the kernel's ARM64_KTRAP_FRAME
    return restoreSavedState(19, 0xa0, {{Lr, 0x138}, {Fp, 0x140}, {32, 0x148}, {Sp, 0x98}});
  if (op == 0xec) { // MSFT_OP_CLEAR_UNWOUND_TO_CALL: the pc is the link register, not a return address
    auto lr = reg(Lr);
    if (!lr) return lr.takeError();
    regs_.setPc(*lr);
    pcSet_ = true;
    return Error::success();
  }
  return fail("unknown unwind code " + hex(op));
}

// Packed unwind data expanded into codes, in prolog order; each code as bytes.
class PackedExpansion {
public:
  explicit PackedExpansion(uint32_t word)
      : flag_(word & 3), regF_((word >> 13) & 7), regI_((word >> 16) & 15), homes_((word >> 20) & 1),
        cr_((word >> 21) & 3), frameSize_((word >> 23) & 0x1ff) {}
  Arm64UnwindData expand(uint32_t functionLength);

private:
  void emit(std::vector<uint8_t> code) { prolog_.push_back(std::move(code)); }
  void alloc(uint32_t bytes);
  void saveIntegers();
  void saveFloats();

  unsigned flag_, regF_, regI_, homes_, cr_, frameSize_;
  int32_t savsz_ = 0, slot_ = 0; // in 8-byte units
  bool predecremented_ = false, fpSet_ = false;
  size_t homeNops_ = SIZE_MAX; // where the four nops of the homed parameters start
  std::vector<std::vector<uint8_t>> prolog_;
};

void PackedExpansion::alloc(uint32_t bytes) {
  uint32_t n = bytes / 16;
  if (n < 0x20) emit({uint8_t(n)});
  else if (n < 0x800) emit({uint8_t(0xc0 | (n >> 8)), uint8_t(n)});
  else emit({0xe0, uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)});
}

void PackedExpansion::saveIntegers() {
  auto pair = [&](unsigned i) { // stp x(19+i), x(20+i)
    uint8_t high = uint8_t((i & 3) << 6);
    if (!predecremented_) emit({uint8_t(0xcc | (i >> 2)), uint8_t(high | (savsz_ - 1))});
    else emit({uint8_t(0xc8 | (i >> 2)), uint8_t(high | slot_)});
    predecremented_ = true;
    slot_ += 2;
  };
  auto single = [&](unsigned i) { // str x(19+i); i = 11 is lr
    if (!predecremented_) emit({uint8_t(0xd4 | (i >> 3)), uint8_t(((i & 7) << 5) | (savsz_ - 1))});
    else emit({uint8_t(0xd0 | (i >> 2)), uint8_t(((i & 3) << 6) | slot_)});
    predecremented_ = true;
    slot_ += 1;
  };
  bool savesLr = cr_ == 1;
  // x19 and lr alone have no pre-indexed pair code: the stack moves first.
  if (regI_ == 1 && savesLr) {
    alloc(savsz_ * 8);
    predecremented_ = true;
  }
  unsigned i = 0;
  for (; i + 1 < regI_; i += 2) pair(i);
  if (regI_ % 2 == 1 && savesLr) { // stp x(19+i), lr: save_lrpair
    emit({uint8_t(0xd6 | ((i / 2) >> 2)), uint8_t((((i / 2) & 3) << 6) | slot_)});
    slot_ += 2;
  } else if (regI_ % 2 == 1) {
    single(i);
  } else if (savesLr) {
    single(11);
  }
}

void PackedExpansion::saveFloats() {
  unsigned count = regF_ ? regF_ + 1 : 0, f = 0;
  for (; f + 1 < count; f += 2) {
    uint8_t high = uint8_t((f & 3) << 6);
    if (!predecremented_) emit({uint8_t(0xda | (f >> 2)), uint8_t(high | (savsz_ - 1))});
    else emit({uint8_t(0xd8 | (f >> 2)), uint8_t(high | slot_)});
    predecremented_ = true;
    slot_ += 2;
  }
  if (count % 2 == 1) {
    if (!predecremented_) emit({0xde, uint8_t((f << 5) | (savsz_ - 1))});
    else emit({uint8_t(0xdc | (f >> 2)), uint8_t(((f & 3) << 6) | slot_)});
    predecremented_ = true;
    slot_ += 1;
  }
}

Arm64UnwindData PackedExpansion::expand(uint32_t functionLength) {
  int32_t intsz = regI_ + (cr_ == 1 ? 1 : 0), fpsz = regF_ ? regF_ + 1 : 0;
  savsz_ = intsz + fpsz;
  if (savsz_ > 0) savsz_ += homes_ * 8;
  savsz_ = (savsz_ + 1) & ~1;
  int32_t locsz = int32_t(frameSize_) * 2 - savsz_;
  if (cr_ == 2) emit({PacSignLr});
  if (intsz) saveIntegers();
  if (fpsz) saveFloats();
  if (homes_ && predecremented_) {
    homeNops_ = prolog_.size();
    for (int n = 0; n < 4; ++n) emit({Nop});
  }
  if (locsz > 0) {
    if (cr_ == 3 || cr_ == 2) {
      if (locsz <= 512 / 8) {
        emit({uint8_t(0x80 | (locsz - 1))}); // stp x29, lr, [sp, #-locsz]!
      } else {
        alloc(locsz * 8);
        emit({0x40}); // stp x29, lr, [sp]
      }
      emit({SetFp});
      fpSet_ = true;
    } else {
      alloc(locsz * 8);
    }
  }
  Arm64UnwindData data;
  data.functionLength = functionLength;
  // Unwind order: the prolog's last instruction first.
  std::vector<std::vector<uint8_t>> unwind(prolog_.rbegin(), prolog_.rend());
  if (flag_ == 2) unwind.insert(unwind.begin(), {EndChained}); // a fragment: no prolog here
  for (const auto &code : unwind) data.codes.insert(data.codes.end(), code.begin(), code.end());
  data.codes.push_back(End);
  if (flag_ == 2) return data; // nor an epilog
  // The epilog undoes the prolog but for set_fp and the homes' nops.
  std::vector<uint8_t> epilog;
  for (size_t k = 0; k < prolog_.size(); ++k) {
    size_t at = prolog_.size() - 1 - k;
    bool home = homeNops_ != SIZE_MAX && at >= homeNops_ && at < homeNops_ + 4;
    if (home || (prolog_[at][0] == SetFp && at == prolog_.size() - 1)) continue;
    epilog.insert(epilog.end(), prolog_[at].begin(), prolog_[at].end());
  }
  data.singleEpilogCodeIndex = uint32_t(data.codes.size());
  data.codes.insert(data.codes.end(), epilog.begin(), epilog.end());
  data.codes.push_back(End);
  return data;
}

} // namespace

Arm64UnwindData expandPackedArm64(uint32_t unwindData) {
  return PackedExpansion(unwindData).expand((unwindData >> 2) & 0x7ff);
}

Expected<Arm64UnwindData> readArm64UnwindData(const MemorySource &memory, uint64_t imageBase, uint32_t unwindData) {
  if (unwindData & 3) {
    if ((unwindData & 3) == 3) return fail("packed unwind data with the reserved flag 3");
    return expandPackedArm64(unwindData);
  }
  uint64_t at = imageBase + unwindData;
  auto header = memory.readValue<uint32_t>(at);
  if (!header) return fail("the .xdata at " + hex(at) + " is not readable");
  if ((*header >> 18) & 3) return fail("unknown .xdata version " + std::to_string((*header >> 18) & 3));
  Arm64UnwindData data;
  data.functionLength = *header & 0x3ffff;
  uint32_t epilogCount = (*header >> 22) & 31, codeWords = (*header >> 27) & 31;
  at += 4;
  if (epilogCount == 0 && codeWords == 0) { // the extended header
    auto extended = memory.readValue<uint32_t>(at);
    if (!extended) return fail("the .xdata's extended header is not readable");
    epilogCount = *extended & 0xffff;
    codeWords = (*extended >> 16) & 0xff;
    at += 4;
  }
  if (*header & (1 << 21)) { // E: one epilog at the end; the count field is its code index
    data.singleEpilogCodeIndex = epilogCount;
    epilogCount = 0;
  }
  if (epilogCount > MaxEpilogScopes) return fail("too many epilog scopes");
  for (uint32_t i = 0; i < epilogCount; ++i, at += 4) {
    auto scope = memory.readValue<uint32_t>(at);
    if (!scope) return fail("an epilog scope of the .xdata is not readable");
    data.epilogs.push_back({*scope & 0x3ffff, *scope >> 22});
  }
  data.codes.resize(std::min<size_t>(codeWords * 4, MaxCodeBytes));
  if (!data.codes.empty() && !memory.read(at, data.codes)) return fail("the .xdata's unwind codes are not readable");
  return data;
}

Expected<UnwindResult> unwindArm64(const MemorySource &memory, const Arm64UnwindData &data, uint32_t offset,
                                   const Frame &frame, OS abi) {
  Execution execution(memory, frame.regs);
  if (Error e = execution.run(data.codes, arm64PositionOf(data, offset))) return e;
  RegisterFile &after = execution.registers();
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  // The caller keeps what the ABI preserves across a call; the codes' restored
  // registers are in `after` already.
  result.caller = after.calleeSavedOnly(abi);
  if (execution.pcSet()) {
    result.caller.setPc(*after.pc());
    result.callerIpIsExact = true;
    for (unsigned n = 0; n <= Lr; ++n)
      if (auto v = after.get(n)) result.caller.set(n, *v);
  } else if (auto lr = after.get(Lr)) {
    result.caller.setPc(*lr);
  } else {
    return fail("the return address (lr) is unknown");
  }
  return result;
}

Expected<UnwindResult> unwindArm64Windows(const MemorySource &memory, uint64_t imageBase,
                                          const RuntimeFunction &function, const Frame &frame, OS abi) {
  auto data = readArm64UnwindData(memory, imageBase, function.unwindInfo);
  if (!data) return data.takeError();
  uint32_t offset = uint32_t((frame.lookupAddress() - imageBase - function.begin) / 4);
  return unwindArm64(memory, *data, offset, frame, abi);
}

UnwindResult unwindArm64Leaf(const Frame &frame) {
  // Only an interrupted frame can be a leaf: a caller made a call.
  auto lr = frame.regs.get(Lr);
  if (!frame.ipIsExact || !lr) return UnwindResult::noInfo("no RUNTIME_FUNCTION covers the frame");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = frame.regs.calleeSavedOnly(OS::Windows);
  result.caller.setPc(*lr);
  return result;
}

} // namespace stackwalk
