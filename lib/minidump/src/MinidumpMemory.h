// The memory a minidump holds: MemoryList and Memory64List ranges, read from
// the mapped file.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <vector>

namespace stackwalk::minidump {

struct MemoryRange {
  uint64_t start = 0, size = 0, fileOffset = 0;
};

class MinidumpMemory : public MemorySource {
public:
  // Ranges must already be clipped to the file; overlaps are allowed (the
  // first range that holds all the bytes of a read answers it).
  MinidumpMemory(std::shared_ptr<llvm::MemoryBuffer> file, std::vector<MemoryRange> ranges);
  bool read(uint64_t address, std::span<uint8_t> out) const override;
  size_t rangeCount() const { return ranges_.size(); }

private:
  std::shared_ptr<llvm::MemoryBuffer> file_;
  std::vector<MemoryRange> ranges_; // sorted by start
  uint64_t longest_ = 0;            // the largest size, to bound the backward search
};

} // namespace stackwalk::minidump
