#include "stackwalk/core/Registers.h"

#include <algorithm>
#include <charconv>

namespace stackwalk {
namespace {

constexpr RegisterInfo X86_64Layout[] = {
    {0, "rax"},  {3, "rbx"},  {2, "rcx"},  {1, "rdx"},  {4, "rsi"},    {5, "rdi"},
    {6, "rbp"},  {7, "rsp"},  {8, "r8"},   {9, "r9"},   {10, "r10"},   {11, "r11"},
    {12, "r12"}, {13, "r13"}, {14, "r14"}, {15, "r15"}, {16, "rip"},   {49, "eflags"},
    {51, "cs"},  {52, "ss"},  {53, "ds"},  {50, "es"},  {54, "fs"},    {55, "gs"},
    {58, "fs_base"}, {59, "gs_base"},
};

constexpr RegisterInfo Arm64Layout[] = {
    {0, "x0"},   {1, "x1"},   {2, "x2"},   {3, "x3"},   {4, "x4"},   {5, "x5"},
    {6, "x6"},   {7, "x7"},   {8, "x8"},   {9, "x9"},   {10, "x10"}, {11, "x11"},
    {12, "x12"}, {13, "x13"}, {14, "x14"}, {15, "x15"}, {16, "x16"}, {17, "x17"},
    {18, "x18"}, {19, "x19"}, {20, "x20"}, {21, "x21"}, {22, "x22"}, {23, "x23"},
    {24, "x24"}, {25, "x25"}, {26, "x26"}, {27, "x27"}, {28, "x28"}, {29, "fp"},
    {30, "lr"},  {31, "sp"},  {32, "pc"},  {33, "cpsr"},
};

// 32-bit ARM: r0-r15 by their DWARF numbers; cpsr has none, so it takes 16
// (an obsolete FPA register's number, f0, which nothing here reads).
constexpr RegisterInfo ArmLayout[] = {
    {0, "r0"}, {1, "r1"}, {2, "r2"},  {3, "r3"},  {4, "r4"},  {5, "r5"},  {6, "r6"},  {7, "r7"},  {8, "r8"},
    {9, "r9"}, {10, "r10"}, {11, "fp"}, {12, "ip"}, {13, "sp"}, {14, "lr"}, {15, "pc"}, {16, "cpsr"},
};

constexpr RegisterInfo X86Layout[] = {
    {0, "eax"}, {3, "ebx"}, {1, "ecx"}, {2, "edx"}, {6, "esi"}, {7, "edi"},
    {5, "ebp"}, {4, "esp"}, {8, "eip"}, {9, "eflags"}, {41, "cs"}, {42, "ss"},
    {43, "ds"}, {40, "es"}, {44, "fs"}, {45, "gs"},
};

} // namespace

std::span<const RegisterInfo> registerLayout(Arch arch) {
  switch (arch) {
  case Arch::X86_64: return X86_64Layout;
  case Arch::Arm64: return Arm64Layout;
  case Arch::X86: return X86Layout;
  case Arch::Arm: return ArmLayout;
  case Arch::Unknown: break;
  }
  return {};
}

std::optional<unsigned> registerByName(Arch arch, std::string_view name) {
  for (const RegisterInfo &info : registerLayout(arch))
    if (info.name == name) return info.number;
  // arm64's frame pointer and link register also go by x29 and x30, ARM's
  // fp, ip, sp, lr and pc by r11-r15 (Breakpad's STACK CFI).
  if (arch == Arch::Arm64 && (name == "x29" || name == "x30")) return name == "x29" ? 29 : 30;
  unsigned number = 0;
  if (arch == Arch::Arm && name.size() > 1 && name[0] == 'r') {
    auto [end, error] = std::from_chars(name.data() + 1, name.data() + name.size(), number);
    if (error == std::errc() && end == name.data() + name.size() && number < 16) return number;
  }
  return std::nullopt;
}

std::span<const RegisterInfo> RegisterFile::layout() const { return registerLayout(arch_); }

unsigned RegisterFile::pcRegister() const {
  switch (arch_) {
  case Arch::Arm64: return 32;
  case Arch::X86: return 8;
  case Arch::Arm: return 15;
  default: return 16;
  }
}

unsigned RegisterFile::spRegister() const {
  switch (arch_) {
  case Arch::Arm64: return 31;
  case Arch::X86: return 4;
  case Arch::Arm: return 13;
  default: return 7;
  }
}

unsigned RegisterFile::fpRegister() const {
  switch (arch_) {
  case Arch::Arm64: return 29;
  case Arch::X86: return 5;
  // The AAPCS's frame pointer in ARM code; Thumb code keeps it in r7
  // (armFramePointerRegister).
  case Arch::Arm: return 11;
  default: return 6;
  }
}

std::optional<unsigned> RegisterFile::linkRegister() const {
  if (arch_ == Arch::Arm64) return 30;
  if (arch_ == Arch::Arm) return 14;
  return std::nullopt;
}

RegisterFile RegisterFile::calleeSavedOnly(OS os) const {
  RegisterFile caller(arch_);
  for (const RegisterInfo &info : layout())
    if (isCalleeSaved(info.number, os))
      if (auto v = get(info.number)) caller.set(info.number, *v);
  return caller;
}

bool RegisterFile::isCalleeSaved(unsigned reg, OS os) const {
  switch (arch_) {
  case Arch::X86_64: {
    // System V: rbx rbp rsp r12-r15; Microsoft x64 adds rsi and rdi.
    if (reg == 3 || reg == 6 || reg == 7 || (reg >= 12 && reg <= 15)) return true;
    return os == OS::Windows && (reg == 4 || reg == 5);
  }
  case Arch::Arm64:
    return (reg >= 19 && reg <= 29) || reg == 31;
  case Arch::X86:
    return reg == 3 || reg == 4 || reg == 5 || reg == 6 || reg == 7;
  case Arch::Arm: // AAPCS: r4-r11 and sp
    return (reg >= 4 && reg <= 11) || reg == 13;
  case Arch::Unknown: break;
  }
  return false;
}

bool isThumb(const RegisterFile &regs) {
  std::optional<uint64_t> cpsr = regs.get(ArmCpsr);
  return regs.arch() == Arch::Arm && cpsr && (*cpsr & ArmThumbBit);
}

void noteInstructionSet(RegisterFile &regs, uint64_t returnAddress) {
  if (regs.arch() != Arch::Arm) return;
  // Only the T bit is known of a caller's cpsr.
  regs.set(ArmCpsr, (returnAddress & 1) ? ArmThumbBit : 0);
}

unsigned armFramePointerRegister(const RegisterFile &regs) { return isThumb(regs) ? 7 : 11; }

unsigned dwarfFromWin64Register(unsigned win64Register) {
  // rax rcx rdx rbx rsp rbp rsi rdi, then r8..r15 which agree.
  static constexpr unsigned Low[] = {0, 2, 1, 3, 7, 6, 4, 5};
  return win64Register < 8 ? Low[win64Register] : win64Register;
}

} // namespace stackwalk
