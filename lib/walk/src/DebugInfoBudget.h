// How much DWARF one dump may make stackwalk decompress and parse, across all
// its modules: a 628-byte core can hold a vDSO whose compressed .debug_info
// claims 1.9 GB, and three JIT objects three times that. Modules are charged
// before the walk, in a fixed order (files before images copied from the
// dump, then by address), so the outcome is the same in a batch as alone; a
// module over the budget is named from its symbol tables (Module::debugInfoRefused).
#pragma once

#include "stackwalk/core/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk {

// Images copied from the dump's memory (vDSO, GDB JIT objects, rebuilt PE
// images) share at most this much of the budget: real ones carry little DWARF.
constexpr uint64_t MaxCopiedImageDebugBytes = uint64_t(64) << 20;

// Marks the modules whose DWARF does not fit in `maxBytes` (uncompressed) and says so in one warning.
void limitDebugInfo(Target &target, uint64_t maxBytes, std::vector<std::string> &warnings);

} // namespace stackwalk
