// The process memory a dump file holds: ranges of addresses whose bytes lie at
// offsets of the file (a core's PT_LOAD segments, a minidump's memory lists),
// copied from it in blocks (DumpFile) or found in place in its mapping.
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Memory.h"

#include <memory>
#include <vector>

namespace stackwalk {

struct DumpedRange {
  uint64_t address = 0, size = 0, fileOffset = 0;
};

class DumpedMemory : public MemorySource {
public:
  // Ranges must already be clipped to the file (size: the bytes it holds).
  // Where ranges overlap, each byte is read from the range that starts last
  // among those holding it (the nearest below it).
  DumpedMemory(std::shared_ptr<const DumpFile> file, std::vector<DumpedRange> ranges);
  // Only bytes the dump holds, in O(log n) whatever the ranges: a read may
  // span adjacent ranges, never a gap.
  bool read(uint64_t address, std::span<uint8_t> out) const override;
  // Within the bytes of one range (of what is left of it where a later range overlaps it).
  std::optional<std::span<const uint8_t>> bytesInPlace(uint64_t address, uint64_t size) const override;

private:
  // The piece holding `address`, or null.
  const DumpedRange *pieceAt(uint64_t address) const;

  std::shared_ptr<const DumpFile> file_;
  std::vector<DumpedRange> pieces_; // sorted, disjoint: the ranges with overlaps resolved
};

} // namespace stackwalk
