// Evaluates DWARF expressions (DWARF 5 section 2.5) against a frame's registers
// and the target's memory.
//
// Written by hand: LLVM 19's DWARFExpression decodes operations but does not
// evaluate them. Every step is bounded: a hostile expression ends in an error,
// never a hang or a crash.
#pragma once

#include "stackwalk/core/Memory.h"
#include "stackwalk/core/Registers.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

struct DwarfExpressionContext {
  const MemorySource *memory = nullptr;
  const RegisterFile *registers = nullptr; // only its known registers are read
  unsigned addressSize = 8;
  std::optional<uint64_t> frameBase; // for DW_OP_fbreg
  std::optional<uint64_t> cfa;       // for DW_OP_call_frame_cfa
};

struct DwarfExpressionResult {
  enum class Kind {
    Address,  // the value is an address where the object lives
    Value,    // DW_OP_stack_value: the value itself
    Register, // DW_OP_regN / regx: the object is in a register
  };
  Kind kind = Kind::Address;
  uint64_t value = 0; // address, value, or register number
};

// `initialStack` is pushed first (CFI register rules start with the CFA).
llvm::Expected<DwarfExpressionResult> evaluateDwarfExpression(std::span<const uint8_t> expression,
                                                              const DwarfExpressionContext &context,
                                                              std::span<const uint64_t> initialStack = {});

} // namespace stackwalk
