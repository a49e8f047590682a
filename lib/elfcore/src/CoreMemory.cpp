#include "CoreMemory.h"

#include <algorithm>
#include <cstring>

namespace stackwalk::elfcore {

CoreMemory::CoreMemory(std::shared_ptr<llvm::MemoryBuffer> file, std::vector<CoreSegment> segments)
    : file_(std::move(file)), segments_(std::move(segments)) {
  std::sort(segments_.begin(), segments_.end(),
            [](const CoreSegment &a, const CoreSegment &b) { return a.vaddr < b.vaddr; });
}

bool CoreMemory::read(uint64_t address, std::span<uint8_t> out) const {
  const char *base = file_->getBufferStart();
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
    std::memcpy(out.data() + done, base + it->fileOffset + delta, n);
    done += n;
  }
  return true;
}

} // namespace stackwalk::elfcore
