// /proc/PID/maps text as lib/live reads it: the kernel writes it, but the
// parser must still take any line without reading past it.
#include "ProcessMaps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto maps = stackwalk::live::parseProcessMaps({reinterpret_cast<const char *>(data), size});
  for (const stackwalk::MemoryRegion &region : maps.regions)
    if (region.end <= region.start) __builtin_trap();
  return 0;
}
