#include "MinidumpMemory.h"

#include <algorithm>

namespace stackwalk::minidump {
namespace {

uint64_t endOf(const MemoryRange &range) { return range.start + std::min(range.size, UINT64_MAX - range.start); }

// Disjoint pieces, each byte from the covering range that starts last. A
// sweep over the ranges by start, with the ranges still open on a stack
// (the last started on top): 1,000,000 overlapping ranges cost a sort, and
// reads never search back through them.
std::vector<MemoryRange> disjointPieces(std::vector<MemoryRange> ranges) {
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const MemoryRange &a, const MemoryRange &b) { return a.start < b.start; });
  std::vector<MemoryRange> pieces, open;
  uint64_t at = 0;
  auto coverUpTo = [&](uint64_t until) {
    while (!open.empty() && at < until) {
      const MemoryRange &top = open.back();
      if (endOf(top) <= at) {
        open.pop_back();
        continue;
      }
      uint64_t end = std::min(endOf(top), until);
      pieces.push_back({at, end - at, top.fileOffset + (at - top.start)});
      at = end;
    }
    at = std::max(at, until);
  };
  for (const MemoryRange &range : ranges) {
    coverUpTo(range.start);
    if (range.size) open.push_back(range);
  }
  coverUpTo(UINT64_MAX);
  return pieces;
}

} // namespace

MinidumpMemory::MinidumpMemory(std::shared_ptr<const DumpFile> file, std::vector<MemoryRange> ranges)
    : file_(std::move(file)), rangeCount_(ranges.size()) {
  pieces_ = disjointPieces(std::move(ranges));
}

bool MinidumpMemory::read(uint64_t address, std::span<uint8_t> out) const {
  for (size_t done = 0; done < out.size();) {
    uint64_t at = address + done;
    if (at < address) return false; // wrapped around
    auto it = std::upper_bound(pieces_.begin(), pieces_.end(), at,
                               [](uint64_t a, const MemoryRange &r) { return a < r.start; });
    if (it == pieces_.begin()) return false;
    --it;
    uint64_t delta = at - it->start;
    if (delta >= it->size) return false;
    size_t n = std::min<uint64_t>(out.size() - done, it->size - delta);
    if (!file_->copy(it->fileOffset + delta, out.subspan(done, n))) return false;
    done += n;
  }
  return true;
}

} // namespace stackwalk::minidump
