#include "stackwalk/elfcore/CoreNotes.h"

#include <cstring>

namespace stackwalk::elfcore {
namespace {

template <typename T> T load(std::span<const uint8_t> bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string fixedString(std::span<const uint8_t> bytes, size_t offset, size_t size) {
  const char *p = reinterpret_cast<const char *>(bytes.data() + offset);
  return std::string(p, strnlen(p, size));
}

// struct elf_prstatus (64-bit): pr_info 12, pr_cursig at 12, pr_pid at 32,
// pr_reg at 112, then pr_fpvalid.
constexpr size_t PrCursig = 12, PrPid = 32, PrReg = 112;

// user_regs_struct order -> DWARF numbers (-1: not a register we track).
constexpr int X86_64PrReg[] = {15, 14, 13, 12, 6,  3,  11, 10, 9,  8,  0,  2,  1, 4,
                               5,  -1, 16, 51, 49, 7, 52, 58, 59, 53, 50, 54, 55};

} // namespace

std::optional<RegisterFile> parseUserRegs(std::span<const uint8_t> regs, Arch arch) {
  size_t count = arch == Arch::X86_64 ? std::size(X86_64PrReg) : arch == Arch::Arm64 ? 34 : 0;
  if (count == 0 || regs.size() < count * 8) return std::nullopt;
  RegisterFile registers(arch);
  for (size_t i = 0; i < count; ++i) {
    // arm64's user_pt_regs is x0-x30, sp, pc, pstate: DWARF numbers 0-33.
    int reg = arch == Arch::X86_64 ? X86_64PrReg[i] : int(i);
    if (reg >= 0) registers.set(unsigned(reg), load<uint64_t>(regs, i * 8));
  }
  return registers;
}

std::optional<PrStatus> parsePrStatus(std::span<const uint8_t> desc, Arch arch) {
  if (desc.size() < PrReg) return std::nullopt;
  auto registers = parseUserRegs(desc.subspan(PrReg), arch);
  if (!registers) return std::nullopt;
  PrStatus status;
  status.tid = load<uint32_t>(desc, PrPid);
  status.signal = load<int16_t>(desc, PrCursig);
  status.registers = *registers;
  return status;
}

std::optional<uint64_t> parsePacInstructionMask(std::span<const uint8_t> desc) {
  if (desc.size() < 16) return std::nullopt;
  return load<uint64_t>(desc, 8);
}

std::optional<PrPsInfo> parsePrPsInfo(std::span<const uint8_t> desc) {
  // struct elf_prpsinfo (64-bit): pr_pid at 24, pr_fname[16] at 40, pr_psargs[80] at 56.
  if (desc.size() < 136) return std::nullopt;
  PrPsInfo info;
  info.pid = load<uint32_t>(desc, 24);
  info.name = fixedString(desc, 40, 16);
  info.arguments = fixedString(desc, 56, 80);
  while (!info.arguments.empty() && info.arguments.back() == ' ') info.arguments.pop_back();
  return info;
}

std::optional<SigInfo> parseSigInfo(std::span<const uint8_t> desc) {
  if (desc.size() < 24) return std::nullopt;
  SigInfo info;
  info.signal = load<int32_t>(desc, 0);
  info.code = load<int32_t>(desc, 8);
  info.source = signalSource(info.signal, info.code, load<uint64_t>(desc, 16));
  return info;
}

std::vector<std::pair<uint64_t, uint64_t>> parseAuxv(std::span<const uint8_t> desc) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t offset = 0; offset + 16 <= desc.size(); offset += 16) {
    uint64_t type = load<uint64_t>(desc, offset);
    if (type == 0) break; // AT_NULL
    out.emplace_back(type, load<uint64_t>(desc, offset + 8));
  }
  return out;
}

std::optional<uint64_t> auxvValue(const std::vector<std::pair<uint64_t, uint64_t>> &auxv, uint64_t type) {
  for (auto [key, value] : auxv)
    if (key == type) return value;
  return std::nullopt;
}

std::vector<FileMapping> parseFileNote(std::span<const uint8_t> desc) {
  std::vector<FileMapping> out;
  if (desc.size() < 16) return out;
  uint64_t count = load<uint64_t>(desc, 0);
  uint64_t pageSize = load<uint64_t>(desc, 8);
  if (count > (desc.size() - 16) / 24) return out;
  size_t names = 16 + count * 24;
  for (uint64_t i = 0; i < count && names < desc.size(); ++i) {
    FileMapping mapping;
    mapping.start = load<uint64_t>(desc, 16 + i * 24);
    mapping.end = load<uint64_t>(desc, 24 + i * 24);
    mapping.fileOffset = load<uint64_t>(desc, 32 + i * 24) * pageSize;
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
