// /proc/PID/maps: a live process's mappings, as a core's program headers
// and NT_FILE note record them.
#pragma once

#include "stackwalk/core/Target.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include <string_view>
#include <vector>

namespace stackwalk::live {

struct ProcessMaps {
  std::vector<MemoryRegion> regions;          // every mapping, sorted
  std::vector<elfcore::FileMapping> files;    // mappings of files, as NT_FILE lists them
  std::optional<MemoryRegion> vdso;
  std::optional<MemoryRegion> mainStack; // [stack]
};

// Lines that do not parse are skipped.
ProcessMaps parseProcessMaps(std::string_view text);

} // namespace stackwalk::live
