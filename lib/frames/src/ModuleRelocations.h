// The pointer values a module's loader would have written: for reading
// pointers out of a module file when the dump left their pages out. An ELF
// shared object keeps such pointers as dynamic relocations (RELA: the file
// holds 0, the value is the load bias plus the addend); a PE image holds the
// value for its preferred base, moved by base relocations.
#pragma once

#include "stackwalk/core/Module.h"

#include <cstdint>
#include <utility>
#include <vector>
#include <optional>

namespace stackwalk::frames {

class ModuleRelocations {
public:
  explicit ModuleRelocations(const Module &module);

  // The pointer at `address` (a process address inside the module) as the
  // process had it after relocation, or nullopt when the file cannot say.
  std::optional<uint64_t> pointerAt(uint64_t address, unsigned pointerSize) const;

private:
  const Module &module_;
  std::vector<std::pair<uint64_t, uint64_t>> elfValues_; // (process address, relocated value), by address
};

} // namespace stackwalk::frames
