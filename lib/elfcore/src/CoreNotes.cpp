#include "stackwalk/elfcore/CoreNotes.h"

#include <cstring>

namespace stackwalk::elfcore {
namespace {

template <typename T> T load(std::span<const uint8_t> bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

// A word of the core's class: 4 bytes in an ELF32 core, 8 in an ELF64 one.
uint64_t loadWord(std::span<const uint8_t> bytes, size_t offset, unsigned wordSize) {
  return wordSize == 4 ? load<uint32_t>(bytes, offset) : load<uint64_t>(bytes, offset);
}

std::string fixedString(std::span<const uint8_t> bytes, size_t offset, size_t size) {
  const char *p = reinterpret_cast<const char *>(bytes.data() + offset);
  return std::string(p, strnlen(p, size));
}

// struct elf_prstatus: pr_info 12, pr_cursig at 12, then pr_sigpend and
// pr_sighold (longs), pr_pid, and after four timevals pr_reg; on 64-bit
// machines pr_pid at 32 and pr_reg at 112, on 32-bit ones at 24 and 72.
constexpr size_t PrCursig = 12;
struct PrStatusLayout {
  size_t pid, reg;
};
constexpr PrStatusLayout PrStatus64{32, 112}, PrStatus32{24, 72};

// user_regs_struct order -> DWARF numbers (-1: not a register we track).
constexpr int X86_64PrReg[] = {15, 14, 13, 12, 6,  3,  11, 10, 9,  8,  0,  2,  1, 4,
                               5,  -1, 16, 51, 49, 7, 52, 58, 59, 53, 50, 54, 55};
// i386's user_regs_struct: ebx ecx edx esi edi ebp eax ds es fs gs orig_eax eip cs eflags esp ss.
constexpr int X86PrReg[] = {3, 1, 2, 6, 7, 5, 0, 43, 40, 44, 45, -1, 8, 41, 9, 4, 42};

} // namespace

std::optional<RegisterFile> parseUserRegs(std::span<const uint8_t> regs, Arch arch) {
  std::span<const int> order;
  size_t count = 0;
  switch (arch) {
  case Arch::X86_64: order = X86_64PrReg; count = order.size(); break;
  case Arch::X86: order = X86PrReg; count = order.size(); break;
  case Arch::Arm64: count = 34; break; // user_pt_regs: x0-x30, sp, pc, pstate: DWARF numbers 0-33
  case Arch::Arm: count = 17; break;   // user_regs: r0-r15, cpsr (then orig_r0): 0-15 and ArmCpsr
  case Arch::Unknown: break;
  }
  unsigned size = pointerSize(arch);
  if (count == 0 || regs.size() < count * size) return std::nullopt;
  RegisterFile registers(arch);
  for (size_t i = 0; i < count; ++i) {
    int reg = order.empty() ? int(i) : order[i];
    if (reg >= 0) registers.set(unsigned(reg), loadWord(regs, i * size, size));
  }
  return registers;
}

std::optional<PrStatus> parsePrStatus(std::span<const uint8_t> desc, Arch arch, unsigned wordSize) {
  PrStatusLayout layout = wordSize == 4 ? PrStatus32 : PrStatus64;
  if (desc.size() < layout.reg) return std::nullopt;
  auto registers = parseUserRegs(desc.subspan(layout.reg), arch);
  if (!registers) return std::nullopt;
  PrStatus status;
  status.tid = load<uint32_t>(desc, layout.pid);
  status.signal = load<int16_t>(desc, PrCursig);
  status.registers = *registers;
  return status;
}

std::optional<uint64_t> parsePacInstructionMask(std::span<const uint8_t> desc) {
  if (desc.size() < 16) return std::nullopt;
  return load<uint64_t>(desc, 8);
}

std::optional<PrPsInfo> parsePrPsInfo(std::span<const uint8_t> desc, unsigned wordSize) {
  // struct elf_prpsinfo: 64-bit, pr_pid at 24, pr_fname[16] at 40,
  // pr_psargs[80] at 56; 32-bit (a 4-byte pr_flag, 2-byte ids), at 12, 28, 44.
  size_t pid = wordSize == 4 ? 12 : 24, name = wordSize == 4 ? 28 : 40, arguments = name + 16;
  if (desc.size() < arguments + 80) return std::nullopt;
  PrPsInfo info;
  info.pid = load<uint32_t>(desc, pid);
  info.name = fixedString(desc, name, 16);
  info.arguments = fixedString(desc, arguments, 80);
  while (!info.arguments.empty() && info.arguments.back() == ' ') info.arguments.pop_back();
  return info;
}

std::optional<SigInfo> parseSigInfo(std::span<const uint8_t> desc, unsigned wordSize) {
  // si_signo, si_errno, si_code, then the union, aligned to a word: si_addr,
  // or si_pid and si_uid (two ints in either class).
  size_t fields = wordSize == 4 ? 12 : 16;
  if (desc.size() < fields + 8) return std::nullopt;
  SigInfo info;
  info.signal = load<int32_t>(desc, 0);
  info.code = load<int32_t>(desc, 8);
  uint64_t field = load<uint64_t>(desc, fields);
  // A 32-bit fault address is the low word alone.
  if (wordSize == 4 && info.code > 0) field = uint32_t(field);
  info.source = signalSource(info.signal, info.code, field);
  return info;
}

std::vector<FileMapping> parseFileNote(std::span<const uint8_t> desc, unsigned wordSize) {
  // count, page size, then (start, end, page offset) per mapping: words of the core's class.
  std::vector<FileMapping> out;
  size_t header = 2 * wordSize, entry = 3 * wordSize;
  if (desc.size() < header) return out;
  uint64_t count = loadWord(desc, 0, wordSize);
  uint64_t pageSize = loadWord(desc, wordSize, wordSize);
  if (count > (desc.size() - header) / entry) return out;
  size_t names = header + count * entry;
  for (uint64_t i = 0; i < count && names < desc.size(); ++i) {
    FileMapping mapping;
    size_t at = header + i * entry;
    mapping.start = loadWord(desc, at, wordSize);
    mapping.end = loadWord(desc, at + wordSize, wordSize);
    mapping.fileOffset = loadWord(desc, at + 2 * wordSize, wordSize) * pageSize;
    mapping.path = fixedString(desc, names, desc.size() - names);
    names += mapping.path.size() + 1;
    if (mapping.end > mapping.start) out.push_back(std::move(mapping));
  }
  return out;
}

bool dumpsCore(int signal) {
  switch (signal) {
  case 3: case 4: case 5: case 6: case 7: case 8: case 11: case 24: case 25: case 31: return true;
  default: return false;
  }
}

} // namespace stackwalk::elfcore
