#include "BreakpadContext.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/WindowsContext.h"

#include <cstring>

namespace stackwalk::minidump {
namespace {

constexpr uint64_t Arm64OldFlag = 0x80000000;
constexpr size_t Arm64OldRegisters = 33; // x0-x30, sp, pc: DWARF 0-32
constexpr size_t Arm64OldCpsrOffset = 8 + 8 * Arm64OldRegisters;

uint64_t load64(std::span<const uint8_t> bytes, size_t offset) {
  uint64_t value;
  std::memcpy(&value, bytes.data() + offset, 8);
  return value;
}

} // namespace

bool isBreakpadArm64OldContext(std::span<const uint8_t> bytes) {
  return bytes.size() >= 8 && (load64(bytes, 0) & Arm64OldFlag) && bytes.size() != windowsContextSize(Arch::Arm64);
}

llvm::Expected<RegisterFile> fromBreakpadArm64OldContext(std::span<const uint8_t> bytes) {
  if (bytes.size() < Arm64OldCpsrOffset + 4)
    return fail("an old Breakpad arm64 context of " + llvm::Twine(bytes.size()) + " bytes is too short");
  RegisterFile regs(Arch::Arm64);
  for (unsigned reg = 0; reg < Arm64OldRegisters; ++reg) regs.set(reg, load64(bytes, 8 + 8 * reg));
  uint32_t cpsr;
  std::memcpy(&cpsr, bytes.data() + Arm64OldCpsrOffset, 4);
  regs.set(33, cpsr);
  return regs;
}

llvm::Expected<RegisterFile> fromBreakpadArmContext(std::span<const uint8_t> bytes) {
  constexpr size_t Registers = 16 + 1; // r0-r15, cpsr: after the 4-byte context_flags
  if (bytes.size() < 4 + 4 * Registers)
    return fail("a Breakpad ARM context of " + llvm::Twine(bytes.size()) + " bytes is too short");
  RegisterFile regs(Arch::Arm);
  for (unsigned reg = 0; reg < Registers; ++reg) {
    uint32_t value;
    std::memcpy(&value, bytes.data() + 4 + 4 * reg, 4);
    regs.set(reg, value); // r0-r15 are DWARF 0-15, cpsr follows them (ArmCpsr)
  }
  return regs;
}

bool isWindowsArmContext(std::span<const uint8_t> bytes) {
  constexpr uint32_t WindowsArmFlag = 0x200000, BreakpadArmFlag = 0x40000000;
  if (bytes.size() < 4) return false;
  uint32_t flags;
  std::memcpy(&flags, bytes.data(), 4);
  return (flags & WindowsArmFlag) && !(flags & BreakpadArmFlag);
}

llvm::Expected<RegisterFile> readThreadContext(Arch arch, std::span<const uint8_t> bytes) {
  if (arch == Arch::Arm) return isWindowsArmContext(bytes) ? fromWindowsContext(arch, bytes) : fromBreakpadArmContext(bytes);
  if (arch == Arch::Arm64 && isBreakpadArm64OldContext(bytes)) return fromBreakpadArm64OldContext(bytes);
  return fromWindowsContext(arch, bytes);
}

} // namespace stackwalk::minidump
