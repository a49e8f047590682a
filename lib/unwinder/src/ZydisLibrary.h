// x86 instructions decoded by Zydis (Debian's libzydis4.0), a decoder of the
// whole instruction set with each operand's registers and actions. The library
// is opened with dlopen when code is first analysed, not linked: a walk that
// analyses none pays nothing for it (LLVM's X86 disassembler, linked in, cost
// every run 1 ms and 257 page faults at start-up for its tables). Without the
// library nothing is decoded.
#pragma once

#include <Zydis/Decoder.h>

#include <cstdint>
#include <optional>
#include <span>

namespace stackwalk {

struct X86Instruction {
  ZydisDecodedInstruction info;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT]; // the visible ones first, then the hidden
};

class ZydisLibrary {
public:
  // The library's decoder for 64-bit or 32-bit code; null without the library.
  static const ZydisLibrary *forMode(bool is64);
  // The instruction at the start of `code`, or nullopt where none decodes within it.
  std::optional<X86Instruction> decode(std::span<const uint8_t> code) const;
  // The register that holds `reg` (rsp for esp in 64-bit code).
  ZydisRegister enclosing(ZydisRegister reg) const;

private:
  ZydisDecoder decoder_;
  ZydisMachineMode mode_;
};

} // namespace stackwalk
