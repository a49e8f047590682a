// The memory a core holds: its PT_LOAD segments, copied from the file in blocks
// (DumpFile), found in place in its mapping.
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Memory.h"

#include <memory>
#include <vector>

namespace stackwalk::elfcore {

struct CoreSegment {
  uint64_t vaddr = 0, memSize = 0, fileOffset = 0;
  uint64_t fileSize = 0; // bytes present in the file (clipped to a truncated file's end)
};

class CoreMemory : public MemorySource {
public:
  CoreMemory(std::shared_ptr<const DumpFile> file, std::vector<CoreSegment> segments);

  // Only bytes the core holds. The part of a segment past p_filesz was not
  // dumped (typically a file-backed mapping): the module file may supply it.
  bool read(uint64_t address, std::span<uint8_t> out) const override;
  // Within one segment's dumped bytes.
  std::optional<std::span<const uint8_t>> bytesInPlace(uint64_t address, uint64_t size) const override;

private:
  std::shared_ptr<const DumpFile> file_;
  std::vector<CoreSegment> segments_; // sorted by vaddr
};

} // namespace stackwalk::elfcore
