#include "CallInstruction.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

#include <array>

namespace stackwalk {
namespace {

// Length of an x86 `FF /2` (call r/m) instruction from its ModRM and SIB bytes.
unsigned indirectCallLength(uint8_t modrm, uint8_t sib) {
  unsigned mod = modrm >> 6, rm = modrm & 7;
  switch (mod) {
  case 0:
    if (rm == 4) return (sib & 7) == 5 ? 7 : 3; // SIB, optionally with disp32
    return rm == 5 ? 6 : 2;                     // rip+disp32, or [reg]
  case 1: return rm == 4 ? 4 : 3;               // disp8
  case 2: return rm == 4 ? 7 : 6;               // disp32
  default: return 2;                            // register
  }
}

// How many of the `size` bytes before an address can be read: all of them,
// or fewer right after the start of readable memory (a short call there is
// still a call).
unsigned readBefore(const Target &target, uint64_t address, uint8_t *bytes, unsigned size) {
  for (unsigned n = size; n > 0; --n)
    if (address >= n && target.read(address - n, std::span(bytes + size - n, n))) return n;
  return 0;
}

// Where a direct call (its target in the instruction) could go: code, when the
// dump records its mappings. Bytes that merely decode as a call mostly point
// nowhere: ARM's PLT read as Thumb (the word before main, whose address
// __libc_start_main keeps on the stack) is a `blx` 5 MB below every mapping.
// Without mappings (minidumps without a memory-info stream) nothing is known.
bool mayBeCallTarget(const Target &target, uint64_t address) {
  return target.regions.empty() || target.isExecutable(address);
}

// x86's call rel32, the 5 bytes before `returnAddress`: its target
// is relative to the return address (32-bit on x86, where it wraps).
uint64_t x86CallRel32Target(const Target &target, uint64_t returnAddress, const uint8_t *rel32) {
  uint64_t address = returnAddress + llvm::SignExtend64(llvm::support::endian::read32le(rel32), 32);
  return target.arch() == Arch::X86 ? address & 0xffffffff : address;
}

CallBefore x86CallBefore(const Target &target, uint64_t returnAddress) {
  constexpr unsigned Longest = 7; // FF /2 with SIB and disp32
  uint8_t bytes[Longest] = {};
  unsigned readable = readBefore(target, returnAddress, bytes, Longest);
  if (readable == 0) return CallBefore::Unknown;
  const uint8_t *end = bytes + Longest;
  if (readable >= 5 && end[-5] == 0xE8 && mayBeCallTarget(target, x86CallRel32Target(target, returnAddress, end - 4)))
    return CallBefore::Yes; // call rel32
  for (unsigned length = 2; length <= readable; ++length) {
    const uint8_t *insn = end - length;
    if (insn[0] != 0xFF || ((insn[1] >> 3) & 7) != 2) continue;
    uint8_t sib = length >= 3 ? insn[2] : 0;
    if (indirectCallLength(insn[1], sib) == length) return CallBefore::Yes;
  }
  return CallBefore::No;
}

CallBefore arm64CallBefore(const Target &target, uint64_t returnAddress) {
  auto insn = target.readValue<uint32_t>(target.codeAddress(returnAddress) - 4);
  if (!insn) return CallBefore::Unknown;
  std::optional<uint64_t> direct = arm64DirectCallTarget(target, returnAddress);
  bool call = (direct && mayBeCallTarget(target, *direct)) || (*insn & 0xFFFFFC1F) == 0xD63F0000; // bl, blr
  return call ? CallBefore::Yes : CallBefore::No;
}

// Where Thumb's 32-bit bl or blx <label> at `at` goes (the ARM ARM's T1 and T2
// encodings): S:I1:I2:imm10:imm11:0 from the instruction + 4, I = NOT(J XOR S);
// blx's target is ARM code, from the instruction + 4 aligned down to a word.
uint64_t thumbCallTarget(uint64_t at, uint16_t first, uint16_t second) {
  uint32_t s = first >> 10 & 1, j1 = second >> 13 & 1, j2 = second >> 11 & 1;
  uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
  uint32_t offset = s << 24 | i1 << 23 | i2 << 22 | uint32_t(first & 0x3ff) << 12 | uint32_t(second & 0x7ff) << 1;
  bool exchange = !(second & 0x1000); // blx: to ARM code
  uint64_t from = exchange ? (at + 4) & ~uint64_t(3) : at + 4;
  return (from + llvm::SignExtend64(offset, 25)) & 0xffffffff;
}

// ARM code: bl, blx <label> or blx <register> in the word before. Thumb code
// (the return address's bit 0 set): a 32-bit bl or blx <label>, or a 16-bit
// blx <register>, right before it.
CallBefore armCallBefore(const Target &target, uint64_t returnAddress) {
  if (returnAddress & 1) {
    uint64_t after = returnAddress & ~uint64_t(1);
    auto last = target.readValue<uint16_t>(after - 2);
    if (!last) return CallBefore::Unknown;
    if ((*last & 0xff87) == 0x4780) return CallBefore::Yes; // blx rM
    auto first = target.readValue<uint16_t>(after - 4);
    if (!first) return CallBefore::Unknown;
    bool longBranch = (*first & 0xf800) == 0xf000 && (*last & 0xc000) == 0xc000; // bl, blx <label>
    return longBranch && mayBeCallTarget(target, thumbCallTarget(after - 4, *first, *last)) ? CallBefore::Yes
                                                                                           : CallBefore::No;
  }
  uint64_t at = returnAddress - 4;
  auto insn = target.readValue<uint32_t>(at);
  if (!insn) return CallBefore::Unknown;
  // Both direct forms branch by their 24-bit word offset from the instruction + 8.
  uint64_t direct = (at + 8 + llvm::SignExtend64(*insn & 0xffffff, 24) * 4) & 0xffffffff;
  bool call = ((*insn & 0x0f000000) == 0x0b000000 && (*insn >> 28) != 0xf && mayBeCallTarget(target, direct)) // bl<cond>
              || ((*insn & 0xfe000000) == 0xfa000000 && mayBeCallTarget(target, direct | (*insn >> 23 & 2))) // blx <label>
              || (*insn & 0x0ffffff0) == 0x012fff30; // blx<cond> rM
  return call ? CallBefore::Yes : CallBefore::No;
}

} // namespace

std::optional<uint64_t> arm64DirectCallTarget(const Target &target, uint64_t returnAddress) {
  uint64_t at = target.codeAddress(returnAddress) - 4;
  auto insn = target.readValue<uint32_t>(at);
  if (!insn || (*insn & 0xFC000000) != 0x94000000) return std::nullopt;
  return at + llvm::SignExtend64(*insn & 0x3ffffff, 26) * 4;
}

std::optional<uint64_t> pcThunkCalledBefore(const Target &target, uint64_t returnAddress) {
  if (target.arch() != Arch::X86 || returnAddress < 5) return std::nullopt;
  auto call = target.readValue<std::array<uint8_t, 5>>(returnAddress - 5);
  if (!call || (*call)[0] != 0xE8) return std::nullopt;
  uint64_t thunk = x86CallRel32Target(target, returnAddress, call->data() + 1);
  // mov reg, [esp] (8B, ModRM mod 00 rm 100 with any reg, SIB 24); ret (C3).
  auto code = target.readValue<std::array<uint8_t, PcThunkSize>>(thunk);
  bool isThunk = code && (*code)[0] == 0x8B && ((*code)[1] & 0xC7) == 0x04 && (*code)[2] == 0x24 && (*code)[3] == 0xC3;
  return isThunk ? std::optional(thunk) : std::nullopt;
}

CallBefore callBefore(const Target &target, uint64_t returnAddress) {
  switch (target.arch()) {
  case Arch::X86_64:
  case Arch::X86: return x86CallBefore(target, returnAddress);
  case Arch::Arm64: return arm64CallBefore(target, returnAddress);
  case Arch::Arm: return armCallBefore(target, returnAddress);
  case Arch::Unknown: break;
  }
  return CallBefore::Unknown;
}

} // namespace stackwalk
