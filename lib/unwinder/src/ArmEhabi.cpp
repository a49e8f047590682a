#include "stackwalk/unwinder/ArmEhabi.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "llvm/ADT/StringExtras.h"

#include <bit>

namespace stackwalk {
namespace {

constexpr uint32_t CantUnwind = 1;
constexpr uint64_t MaxEntries = 1 << 20;
constexpr unsigned MaxExtabWords = 64;
constexpr unsigned Sp = 13, Lr = 14, Pc = 15;

// A prel31 offset (bits 0-30, sign-extended) from the word's own address.
uint64_t prel31(uint64_t at, uint32_t word) {
  int64_t offset = int64_t(int32_t(word << 1) >> 1);
  return uint32_t(at + offset);
}

// One unwind instruction, decoded.
struct Operation {
  enum Kind { AddVsp, SubVsp, Pop, SetVsp, Skip, Finish, Refuse, Reserved } kind = Reserved;
  uint64_t value = 0; // bytes for AddVsp, SubVsp, Skip; a register mask for Pop; a register for SetVsp
  size_t length = 1;  // bytes of the instruction
};

Operation pop(uint32_t mask, size_t length = 1) { return {Operation::Pop, mask, length}; }
// Registers the tables pop as stack space only (VFP and iWMMXt): their bytes.
Operation skip(uint64_t bytes, size_t length) { return {Operation::Skip, bytes, length}; }

// The instruction at `at` (EHABI 10.3, table 4).
Operation decode(std::span<const uint8_t> ops, size_t at) {
  uint8_t op = ops[at];
  auto next = [&]() -> std::optional<uint8_t> {
    return at + 1 < ops.size() ? std::optional<uint8_t>(ops[at + 1]) : std::nullopt;
  };
  if ((op & 0xc0) == 0x00) return {Operation::AddVsp, (uint64_t(op & 0x3f) << 2) + 4};
  if ((op & 0xc0) == 0x40) return {Operation::SubVsp, (uint64_t(op & 0x3f) << 2) + 4};
  if ((op & 0xf0) == 0x80) {
    std::optional<uint8_t> low = next();
    if (!low) return {Operation::Reserved};
    uint32_t mask = (uint32_t(op & 0x0f) << 8 | *low) << 4; // r4-r15
    return mask ? pop(mask, 2) : Operation{Operation::Refuse, 0, 2};
  }
  if ((op & 0xf0) == 0x90) {
    unsigned reg = op & 0x0f;
    return reg == 13 || reg == 15 ? Operation{Operation::Reserved} : Operation{Operation::SetVsp, reg};
  }
  if ((op & 0xf8) == 0xa0) return pop(((1u << ((op & 7) + 1)) - 1) << 4);               // r4-r[4+n]
  if ((op & 0xf8) == 0xa8) return pop(((1u << ((op & 7) + 1)) - 1) << 4 | 1u << Lr);    // r4-r[4+n], lr
  if (op == 0xb0) return {Operation::Finish};
  if (op == 0xb1) {
    std::optional<uint8_t> mask = next();
    if (!mask || *mask == 0 || (*mask & 0xf0)) return {Operation::Reserved, 0, 2};
    return pop(*mask, 2);                                                                 // r0-r3
  }
  if (op == 0xb2) { // vsp += 0x204 + (uleb128 << 2)
    uint64_t value = 0;
    unsigned shift = 0;
    for (size_t i = at + 1; i < ops.size() && shift < 28; ++i, shift += 7) {
      value |= uint64_t(ops[i] & 0x7f) << shift;
      if (!(ops[i] & 0x80)) return {Operation::AddVsp, 0x204 + (value << 2), i - at + 1};
    }
    return {Operation::Reserved};
  }
  if (op == 0xb3 || op == 0xc8 || op == 0xc9) { // VFP d[s]-d[s+c]: FSTMFDX (b3) adds a word
    std::optional<uint8_t> range = next();
    if (!range) return {Operation::Reserved};
    return skip(8 * uint64_t((*range & 0x0f) + 1) + (op == 0xb3 ? 4 : 0), 2);
  }
  if ((op & 0xf8) == 0xb8) return skip(8 * uint64_t((op & 7) + 1) + 4, 1); // FSTMFDX d8-d[8+n]
  if ((op & 0xf8) == 0xd0) return skip(8 * uint64_t((op & 7) + 1), 1);     // VPUSH d8-d[8+n]
  if ((op & 0xf8) == 0xc0 && (op & 7) < 6) return skip(8 * uint64_t((op & 7) + 1), 1); // wR10-wR[10+n]
  if (op == 0xc6) {
    std::optional<uint8_t> range = next();
    return range ? skip(8 * uint64_t((*range & 0x0f) + 1), 2) : Operation{Operation::Reserved};
  }
  if (op == 0xc7) {
    std::optional<uint8_t> mask = next();
    if (!mask || *mask == 0 || (*mask & 0xf0)) return {Operation::Reserved, 0, 2};
    return skip(4 * uint64_t(std::popcount(unsigned(*mask))), 2);                         // wCGR under mask
  }
  return {Operation::Reserved};
}

std::string registerList(uint32_t mask) {
  static const char *const Names[] = {"r0", "r1", "r2", "r3", "r4", "r5",  "r6", "r7",
                                      "r8", "r9", "r10", "fp", "ip", "sp", "lr", "pc"};
  std::string out;
  for (unsigned reg = 0; reg < 16; ++reg)
    if (mask & (1u << reg)) out += (out.empty() ? "" : ", ") + std::string(Names[reg]);
  return "{" + out + "}";
}

std::string describe(const Operation &operation) {
  switch (operation.kind) {
  case Operation::AddVsp: return "vsp += " + std::to_string(operation.value);
  case Operation::SubVsp: return "vsp -= " + std::to_string(operation.value);
  case Operation::Pop: return "pop " + registerList(uint32_t(operation.value));
  case Operation::SetVsp: return "vsp = r" + std::to_string(operation.value);
  case Operation::Skip: return "pop " + std::to_string(operation.value) + " bytes of VFP or iWMMXt registers";
  case Operation::Finish: return "finish";
  case Operation::Refuse: return "refuse to unwind";
  case Operation::Reserved: break;
  }
  return "reserved or spare";
}

// An extab (or inline) entry's instructions: the bytes after the personality
// word's header, then `extra` more words, most significant byte first.
std::optional<std::vector<uint8_t>> instructions(const MemorySource &memory, uint64_t at, uint32_t first,
                                                 unsigned skipBytes, unsigned extra) {
  std::vector<uint8_t> out;
  for (int byte = 3 - int(skipBytes); byte >= 0; --byte) out.push_back(uint8_t(first >> (8 * byte)));
  if (extra > MaxExtabWords) return std::nullopt;
  for (unsigned i = 0; i < extra; ++i) {
    auto word = memory.readValue<uint32_t>(at + 4 * (i + 1));
    if (!word) return std::nullopt;
    for (int byte = 3; byte >= 0; --byte) out.push_back(uint8_t(*word >> (8 * byte)));
  }
  return out;
}

// An .ARM.extab entry: a compact model's (personality index in bits 24-27
// of a word with bit 31 set), or a generic personality's, whose next word
// starts with the count of more words, as model 1.
std::optional<ArmUnwindEntry> extabEntry(const MemorySource &memory, uint64_t at, ArmUnwindEntry entry) {
  auto word = memory.readValue<uint32_t>(at);
  if (!word) return std::nullopt;
  if (*word & 0x80000000) {
    unsigned model = (*word >> 24) & 0x0f;
    entry.personality = "compact model " + std::to_string(model);
    std::optional<std::vector<uint8_t>> ops;
    if (model == 0) ops = instructions(memory, at, *word, 1, 0);
    else if (model == 1 || model == 2) ops = instructions(memory, at, *word, 2, (*word >> 16) & 0xff);
    if (!ops) return std::nullopt;
    entry.opcodes = std::move(*ops);
    return entry;
  }
  entry.personality = "generic personality at " + hex(prel31(at, *word));
  auto header = memory.readValue<uint32_t>(at + 4);
  if (!header) return std::nullopt;
  auto ops = instructions(memory, at + 4, *header, 1, *header >> 24);
  if (!ops) return std::nullopt;
  entry.opcodes = std::move(*ops);
  return entry;
}

} // namespace

std::optional<ArmUnwindEntry> findArmUnwindEntry(const MemorySource &memory, uint64_t tableAddress,
                                                 uint64_t tableSize, uint64_t address) {
  uint64_t count = std::min<uint64_t>(tableSize / 8, MaxEntries);
  auto functionAt = [&](uint64_t i) -> std::optional<uint64_t> {
    auto word = memory.readValue<uint32_t>(tableAddress + 8 * i);
    if (!word) return std::nullopt;
    return prel31(tableAddress + 8 * i, *word) & ~uint64_t(1); // a Thumb function's bit 0, where set
  };
  // The last entry whose function starts at or below the address.
  uint64_t low = 0, high = count;
  while (low < high) {
    uint64_t middle = low + (high - low) / 2;
    std::optional<uint64_t> start = functionAt(middle);
    if (!start) return std::nullopt;
    if (*start <= address) low = middle + 1;
    else high = middle;
  }
  if (low == 0) return std::nullopt;
  uint64_t at = tableAddress + 8 * (low - 1);
  ArmUnwindEntry entry;
  entry.functionStart = *functionAt(low - 1);
  auto data = memory.readValue<uint32_t>(at + 4);
  if (!data) return std::nullopt;
  if (*data == CantUnwind) {
    entry.cannotUnwind = true;
    entry.personality = "EXIDX_CANTUNWIND";
    return entry;
  }
  if (*data & 0x80000000) { // compact model 0, inline
    if ((*data >> 24) != 0x80) return std::nullopt;
    entry.personality = "compact model 0 (inline)";
    entry.opcodes = *instructions(memory, at + 4, *data, 1, 0);
    return entry;
  }
  return extabEntry(memory, prel31(at + 4, *data), std::move(entry));
}

llvm::Expected<RegisterFile> executeArmUnwind(std::span<const uint8_t> opcodes, const RegisterFile &callee,
                                              const MemorySource &memory) {
  // The instructions read the callee's registers (vsp = rN, lr); the caller
  // gets what they pop, and the registers the callee had to preserve.
  RegisterFile regs = callee;
  uint32_t popped = 0;
  std::optional<uint64_t> vsp = regs.sp();
  if (!vsp) return fail("the stack pointer is unknown");
  bool poppedPc = false;
  for (size_t at = 0; at < opcodes.size();) {
    Operation operation = decode(opcodes, at);
    std::string where = "instruction " + hex(opcodes[at]) + " (" + describe(operation) + ")";
    at += operation.length;
    switch (operation.kind) {
    case Operation::AddVsp: *vsp += operation.value; break;
    case Operation::SubVsp: *vsp -= operation.value; break;
    case Operation::Skip: *vsp += operation.value; break;
    case Operation::SetVsp: {
      std::optional<uint64_t> value = regs.get(unsigned(operation.value));
      if (!value) return fail(where + ": the register is unknown");
      vsp = value;
      break;
    }
    case Operation::Pop:
      for (unsigned reg = 0; reg < 16; ++reg) {
        if (!(operation.value & (1u << reg))) continue;
        auto value = memory.readValue<uint32_t>(*vsp);
        if (!value) return fail(where + ": the stack at " + hex(*vsp) + " is not in the dump");
        *vsp += 4;
        regs.set(reg, *value);
        popped |= 1u << reg;
        poppedPc |= reg == Pc;
      }
      // Popping sp sets the virtual stack pointer (EHABI 10.3, note on 0x8xxx).
      if (operation.value & (1u << Sp)) vsp = regs.sp();
      break;
    case Operation::Finish: at = opcodes.size(); break;
    case Operation::Refuse: return fail("the function refuses to be unwound (" + where + ")");
    case Operation::Reserved: return fail("a reserved or spare " + where);
    }
    *vsp = uint32_t(*vsp);
  }
  std::optional<uint64_t> pc = poppedPc ? regs.get(Pc) : regs.get(Lr);
  if (!pc) return fail("lr is unknown and the instructions do not pop pc");
  RegisterFile caller = callee.calleeSavedOnly(OS::Linux);
  for (unsigned reg = 0; reg < 16; ++reg)
    if (popped & (1u << reg))
      if (std::optional<uint64_t> value = regs.get(reg)) caller.set(reg, *value);
  caller.setSp(*vsp);
  caller.setPc(*pc);
  return caller;
}

std::vector<std::string> describeArmUnwind(std::span<const uint8_t> opcodes) {
  std::vector<std::string> out;
  for (size_t at = 0; at < opcodes.size();) {
    Operation operation = decode(opcodes, at);
    std::vector<std::string> bytes;
    for (size_t i = at; i < at + operation.length && i < opcodes.size(); ++i) bytes.push_back(hex(opcodes[i]));
    out.push_back(llvm::join(bytes, " ") + "  " + describe(operation));
    if (operation.kind == Operation::Finish) break;
    at += operation.length;
  }
  return out;
}

} // namespace stackwalk
