// Addresses in unwinder messages, spelled as the reports spell them.
#pragma once

#include "llvm/ADT/StringExtras.h"

#include <cstdint>
#include <string>

namespace stackwalk {

inline std::string hex(uint64_t v) { return "0x" + llvm::utohexstr(v, /*LowerCase=*/true); }

} // namespace stackwalk
