// DW_CFA_GNU_negative_offset_extended (0x2f), an old GNU extension, is the one
// call frame operation LLVM 19's CFIProgram cannot parse. It means "the
// register is saved at CFA - N * data alignment", which DW_CFA_offset_extended_sf
// says with a negated factored offset: rewrite the program into that form.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

// The program with every GNU negative offset rewritten, or nullopt when it has
// none (or cannot be decoded: LLVM then reports the damage itself).
std::optional<std::vector<uint8_t>> rewriteGnuNegativeOffsets(std::span<const uint8_t> program,
                                                               unsigned addressSize);

} // namespace stackwalk
