// Whether a DWARF expression is just a register location (DW_OP_regN or
// DW_OP_regx N): the form DW_OP_entry_value and call-site parameters use.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "llvm/Support/Error.h"

namespace stackwalk {

std::optional<unsigned> registerOnly(std::span<const uint8_t> expression);

// The register whose value at entry DW_OP_entry_value asks for, or why that
// operand is not evaluated (only a register's value at entry is recovered).
llvm::Expected<unsigned> entryValueRegister(std::span<const uint8_t> operand);

} // namespace stackwalk
