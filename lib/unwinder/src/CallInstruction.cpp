#include "CallInstruction.h"

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

CallBefore x86CallBefore(const Target &target, uint64_t returnAddress) {
  constexpr unsigned Longest = 7; // FF /2 with SIB and disp32
  uint8_t bytes[Longest] = {};
  unsigned readable = readBefore(target, returnAddress, bytes, Longest);
  if (readable == 0) return CallBefore::Unknown;
  const uint8_t *end = bytes + Longest;
  if (readable >= 5 && end[-5] == 0xE8) return CallBefore::Yes; // call rel32
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
  bool call = (*insn & 0xFC000000) == 0x94000000   // bl
              || (*insn & 0xFFFFFC1F) == 0xD63F0000; // blr
  return call ? CallBefore::Yes : CallBefore::No;
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
    return longBranch ? CallBefore::Yes : CallBefore::No;
  }
  auto insn = target.readValue<uint32_t>(returnAddress - 4);
  if (!insn) return CallBefore::Unknown;
  bool call = ((*insn & 0x0f000000) == 0x0b000000 && (*insn >> 28) != 0xf) // bl<cond>
              || (*insn & 0xfe000000) == 0xfa000000                     // blx <label>
              || (*insn & 0x0ffffff0) == 0x012fff30;                    // blx<cond> rM
  return call ? CallBefore::Yes : CallBefore::No;
}

} // namespace

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
