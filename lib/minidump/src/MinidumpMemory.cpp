#include "MinidumpMemory.h"

#include <algorithm>
#include <cstring>

namespace stackwalk::minidump {

MinidumpMemory::MinidumpMemory(std::shared_ptr<llvm::MemoryBuffer> file, std::vector<MemoryRange> ranges)
    : file_(std::move(file)), ranges_(std::move(ranges)) {
  std::stable_sort(ranges_.begin(), ranges_.end(),
                   [](const MemoryRange &a, const MemoryRange &b) { return a.start < b.start; });
  for (const MemoryRange &range : ranges_) longest_ = std::max(longest_, range.size);
}

bool MinidumpMemory::read(uint64_t address, std::span<uint8_t> out) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t a, const MemoryRange &r) { return a < r.start; });
  // Ranges may overlap: walk back over every range that could contain the address.
  while (it != ranges_.begin()) {
    --it;
    if (address - it->start >= longest_) break;
    uint64_t delta = address - it->start;
    if (delta < it->size && out.size() <= it->size - delta) {
      std::memcpy(out.data(), file_->getBufferStart() + it->fileOffset + delta, out.size());
      return true;
    }
  }
  return false;
}

} // namespace stackwalk::minidump
