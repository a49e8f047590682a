#include "CoreMemory.h"

#include <algorithm>

namespace stackwalk::elfcore {

CoreMemory::CoreMemory(std::shared_ptr<const DumpFile> file, std::vector<CoreSegment> segments)
    : file_(std::move(file)), segments_(std::move(segments)) {
  std::sort(segments_.begin(), segments_.end(),
            [](const CoreSegment &a, const CoreSegment &b) { return a.vaddr < b.vaddr; });
}

bool CoreMemory::read(uint64_t address, std::span<uint8_t> out) const {
  size_t done = 0;
  // A read may run across adjacent segments; each piece must be present.
  while (done < out.size()) {
    uint64_t at = address + done;
    if (at < address) return false; // wrapped around
    auto it = std::upper_bound(segments_.begin(), segments_.end(), at,
                               [](uint64_t a, const CoreSegment &s) { return a < s.vaddr; });
    if (it == segments_.begin()) return false;
    --it;
    uint64_t delta = at - it->vaddr;
    if (delta >= it->fileSize) return false;
    size_t n = std::min<uint64_t>(out.size() - done, it->fileSize - delta);
    if (!file_->copy(it->fileOffset + delta, out.subspan(done, n))) return false;
    done += n;
  }
  return true;
}

std::optional<std::span<const uint8_t>> CoreMemory::bytesInPlace(uint64_t address, uint64_t size) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const CoreSegment &s) { return a < s.vaddr; });
  if (it == segments_.begin()) return std::nullopt;
  --it;
  uint64_t delta = address - it->vaddr;
  if (delta >= it->fileSize || size > it->fileSize - delta) return std::nullopt;
  return file_->bytes().subspan(it->fileOffset + delta, size);
}

} // namespace stackwalk::elfcore
