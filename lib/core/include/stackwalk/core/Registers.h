// One register file for every architecture, recording which registers are known.
//
// Registers are numbered as DWARF numbers them (x86-64: 0 rax ... 16 rip; arm64:
// 0-30 x0-x30, 31 sp, 32 pc; x86: 0 eax ... 8 eip; ARM: 0-15 r0-r15), with the
// DWARF numbers of the flags and segment registers where they exist. An unwinder that cannot
// recover a register leaves it unknown; nothing ever guesses a value.
#pragma once

#include "stackwalk/core/Arch.h"

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace stackwalk {

struct RegisterInfo {
  unsigned number;       // DWARF number, the index into RegisterFile
  std::string_view name; // as gdb and WinDbg print it
};

class RegisterFile {
public:
  static constexpr unsigned Capacity = 64;

  explicit RegisterFile(Arch arch = Arch::X86_64) : arch_(arch) {}

  Arch arch() const { return arch_; }

  std::optional<uint64_t> get(unsigned reg) const {
    if (reg >= Capacity || !known_[reg]) return std::nullopt;
    return values_[reg];
  }
  bool isKnown(unsigned reg) const { return reg < Capacity && known_[reg]; }
  void set(unsigned reg, uint64_t value) {
    if (reg >= Capacity) return;
    values_[reg] = value;
    known_[reg] = true;
  }
  void forget(unsigned reg) {
    if (reg < Capacity) known_[reg] = false;
  }

  unsigned pcRegister() const;
  unsigned spRegister() const;
  unsigned fpRegister() const;
  // Where a call leaves its return address, on architectures that keep it in
  // a register (arm64's x30); none on x86, where a call pushes it.
  std::optional<unsigned> linkRegister() const;
  std::optional<uint64_t> pc() const { return get(pcRegister()); }
  std::optional<uint64_t> sp() const { return get(spRegister()); }
  std::optional<uint64_t> fp() const { return get(fpRegister()); }
  void setPc(uint64_t v) { set(pcRegister(), v); }
  void setSp(uint64_t v) { set(spRegister(), v); }

  // The registers of this architecture in the order people expect to read them.
  std::span<const RegisterInfo> layout() const;

  // Registers that a callee must preserve for its caller under the platform ABI
  // (System V for Linux, Microsoft x64 for Windows). Only these can be carried
  // from a callee frame to its caller when unwind info says "same value".
  bool isCalleeSaved(unsigned reg, OS os) const;
  // A caller's registers as far as a callee that kept the ABI tells: the
  // callee-saved ones that are known; the unwinder adds sp, pc and its rules.
  RegisterFile calleeSavedOnly(OS os) const;

private:
  Arch arch_;
  std::array<uint64_t, Capacity> values_{};
  std::bitset<Capacity> known_;
};

std::span<const RegisterInfo> registerLayout(Arch arch);
std::optional<unsigned> registerByName(Arch arch, std::string_view name);

// 32-bit ARM: cpsr's number in RegisterFile (Registers.cpp), and its T bit:
// the thread runs Thumb code.
constexpr unsigned ArmCpsr = 16;
constexpr uint64_t ArmThumbBit = 1u << 5;
bool isThumb(const RegisterFile &regs);
// ARM interworking: bit 0 of a return address says the caller runs Thumb
// code; its cpsr gets that T bit (no-op on other architectures).
void noteInstructionSet(RegisterFile &regs, uint64_t returnAddress);
// The frame pointer of ARM code (r11) or Thumb code (r7), by the T bit.
unsigned armFramePointerRegister(const RegisterFile &regs);

// Win64 unwind codes number x86-64 registers rax rcx rdx rbx rsp rbp rsi rdi r8..r15.
unsigned dwarfFromWin64Register(unsigned win64Register);

} // namespace stackwalk
