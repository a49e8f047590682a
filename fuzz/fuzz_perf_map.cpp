// perf's JIT symbol maps (/tmp/perf-PID.map text, PerfMap.h): any text parsed,
// and each lookup at the edges of the first entries answered as a scan of every
// entry answers it (the latest line covering the address wins).
#include "stackwalk/core/PerfMap.h"

#include <string>

namespace {

const stackwalk::PerfMap::Entry *latestCovering(const stackwalk::PerfMap &map, uint64_t address) {
  const stackwalk::PerfMap::Entry *found = nullptr;
  for (const stackwalk::PerfMap::Entry &entry : map.entries())
    if (address - entry.start < entry.size) found = &entry;
  return found;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto map = stackwalk::PerfMap::parse(std::string(reinterpret_cast<const char *>(data), size));
  constexpr size_t Checked = 32;
  for (size_t i = 0; i < map.entries().size() && i < Checked; ++i) {
    const stackwalk::PerfMap::Entry &entry = map.entries()[i];
    if (entry.size == 0 || entry.start + entry.size < entry.start || entry.name.empty()) __builtin_trap();
    for (uint64_t address : {entry.start - 1, entry.start, entry.start + entry.size - 1, entry.start + entry.size})
      if (map.lookup(address) != latestCovering(map, address)) __builtin_trap();
  }
  return 0;
}
