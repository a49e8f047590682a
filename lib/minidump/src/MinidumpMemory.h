// The memory a minidump holds: MemoryList and Memory64List ranges, read from
// the file in blocks (DumpFile).
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Memory.h"

#include <memory>
#include <vector>

namespace stackwalk::minidump {

struct MemoryRange {
  uint64_t start = 0, size = 0, fileOffset = 0;
};

class MinidumpMemory : public MemorySource {
public:
  // Ranges must already be clipped to the file. Where ranges overlap, each
  // byte is read from the range that starts last (the nearest below it).
  MinidumpMemory(std::shared_ptr<const DumpFile> file, std::vector<MemoryRange> ranges);
  // In O(log n) whatever the ranges: a read may span adjacent ranges.
  bool read(uint64_t address, std::span<uint8_t> out) const override;
  size_t rangeCount() const { return rangeCount_; }

private:
  std::shared_ptr<const DumpFile> file_;
  std::vector<MemoryRange> pieces_; // sorted, disjoint: the ranges with overlaps resolved
  size_t rangeCount_;
};

} // namespace stackwalk::minidump
