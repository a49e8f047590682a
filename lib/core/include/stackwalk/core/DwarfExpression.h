// Evaluates DWARF expressions (DWARF 5 section 2.5) and location descriptions
// (section 2.6: registers, memory, values, implicit values and pointers, and
// objects composed of pieces) against a frame's registers and the target's
// memory. CFI register rules and variable locations both use it.
//
// Written by hand: LLVM 19's DWARFExpression decodes operations but does not
// evaluate them. Every step is bounded: a hostile expression ends in an error,
// never a hang or a crash.
#pragma once

#include "stackwalk/core/Memory.h"
#include "stackwalk/core/Registers.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

struct DwarfExpressionContext {
  const MemorySource *memory = nullptr;
  const RegisterFile *registers = nullptr; // only its known registers are read
  unsigned addressSize = 8;
  unsigned offsetSize = 4;            // the unit's DWARF format: 4 (DWARF32) or 8 (DWARF64)
  uint64_t loadBias = 0;             // added to DW_OP_addr / addrx operands, which are file addresses
  std::optional<uint64_t> frameBase; // for DW_OP_fbreg
  std::optional<uint64_t> cfa;       // for DW_OP_call_frame_cfa
  // DW_OP_entry_value: what the given expression (a register) held when the
  // function was entered; only the caller's call site can say.
  std::function<llvm::Expected<uint64_t>(std::span<const uint8_t>)> entryValue;
  // DW_OP_addrx / DW_OP_constx: an entry of the unit's .debug_addr.
  std::function<std::optional<uint64_t>(uint64_t)> indexedAddress;
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

// One part of an object's location. An object not split by DW_OP_piece has
// one part with no size.
struct DwarfLocationPiece {
  enum class Kind {
    Memory,          // `value` is the address
    Register,        // `value` is the DWARF register number
    Value,           // `value` is the value (DW_OP_stack_value)
    ImplicitValue,   // `bytes` are the value (DW_OP_implicit_value)
    ImplicitPointer, // a pointer to an object that exists only in debug info
    Empty,           // this part was optimized out
  };
  Kind kind = Kind::Empty;
  uint64_t value = 0;
  std::vector<uint8_t> bytes;
  std::optional<uint64_t> sizeInBits; // nullopt: the whole object
  uint64_t bitOffset = 0;             // DW_OP_bit_piece: where the part starts in its location
};
using DwarfLocation = std::vector<DwarfLocationPiece>;

// A single-location expression, as CFI rules use them. `initialStack` is
// pushed first (CFI register rules start with the CFA).
llvm::Expected<DwarfExpressionResult> evaluateDwarfExpression(std::span<const uint8_t> expression,
                                                              const DwarfExpressionContext &context,
                                                              std::span<const uint64_t> initialStack = {});

// A variable's location description, possibly in pieces.
llvm::Expected<DwarfLocation> evaluateDwarfLocation(std::span<const uint8_t> expression,
                                                    const DwarfExpressionContext &context);

} // namespace stackwalk
