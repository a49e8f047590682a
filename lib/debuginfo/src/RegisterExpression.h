// Whether a DWARF expression is just a register location (DW_OP_regN or
// DW_OP_regx N): the form DW_OP_entry_value and call-site parameters use.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace stackwalk {

std::optional<unsigned> registerOnly(std::span<const uint8_t> expression);

} // namespace stackwalk
