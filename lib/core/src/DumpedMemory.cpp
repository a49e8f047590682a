#include "stackwalk/core/DumpedMemory.h"

#include <algorithm>

namespace stackwalk {
namespace {

uint64_t endOf(const DumpedRange &range) { return range.address + std::min(range.size, UINT64_MAX - range.address); }

// Disjoint pieces, each byte from the covering range that starts last. A
// sweep over the ranges by start, with the ranges still open on a stack
// (the last started on top): 1,000,000 overlapping ranges cost a sort, and
// reads never search back through them.
std::vector<DumpedRange> disjointPieces(std::vector<DumpedRange> ranges) {
  std::stable_sort(ranges.begin(), ranges.end(),
                   [](const DumpedRange &a, const DumpedRange &b) { return a.address < b.address; });
  std::vector<DumpedRange> pieces, open;
  uint64_t at = 0;
  auto coverUpTo = [&](uint64_t until) {
    while (!open.empty() && at < until) {
      const DumpedRange &top = open.back();
      if (endOf(top) <= at) {
        open.pop_back();
        continue;
      }
      uint64_t end = std::min(endOf(top), until);
      pieces.push_back({at, end - at, top.fileOffset + (at - top.address)});
      at = end;
    }
    at = std::max(at, until);
  };
  for (const DumpedRange &range : ranges) {
    coverUpTo(range.address);
    if (range.size) open.push_back(range);
  }
  coverUpTo(UINT64_MAX);
  return pieces;
}

} // namespace

DumpedMemory::DumpedMemory(std::shared_ptr<const DumpFile> file, std::vector<DumpedRange> ranges)
    : file_(std::move(file)), pieces_(disjointPieces(std::move(ranges))) {}

const DumpedRange *DumpedMemory::pieceAt(uint64_t address) const {
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), address,
                             [](uint64_t a, const DumpedRange &piece) { return a < piece.address; });
  if (it == pieces_.begin()) return nullptr;
  --it;
  return address - it->address < it->size ? &*it : nullptr;
}

bool DumpedMemory::read(uint64_t address, std::span<uint8_t> out) const {
  for (size_t done = 0; done < out.size();) {
    uint64_t at = address + done;
    if (at < address) return false; // wrapped around
    const DumpedRange *piece = pieceAt(at);
    if (!piece) return false;
    uint64_t delta = at - piece->address;
    size_t n = std::min<uint64_t>(out.size() - done, piece->size - delta);
    if (!file_->copy(piece->fileOffset + delta, out.subspan(done, n))) return false;
    done += n;
  }
  return true;
}

std::optional<std::span<const uint8_t>> DumpedMemory::bytesInPlace(uint64_t address, uint64_t size) const {
  const DumpedRange *piece = pieceAt(address);
  if (!piece || size > piece->size - (address - piece->address)) return std::nullopt;
  return file_->bytes().subspan(piece->fileOffset + (address - piece->address), size);
}

} // namespace stackwalk
