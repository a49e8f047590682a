// A live process's memory, read with process_vm_readv (else /proc/PID/mem)
// a page at a time, and every page kept: while the process is stopped each
// read sees the same instant. Once it runs again (freeze()) a page not kept is
// read only where the process cannot have changed it since: in read-only
// mappings of files (code, constants, symbol tables), or, when the walk runs
// after the stop, anywhere but the threads' stacks, whose pages were kept
// whole while it was stopped.
#pragma once

#include "stackwalk/core/Memory.h"
#include "stackwalk/core/Target.h"

#include <array>
#include <cstdint>
#include <memory>
#include <sys/types.h>
#include <unordered_map>
#include <vector>

namespace stackwalk::live {

class ProcessMemory {
public:
  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  ~ProcessMemory();

  bool read(uint64_t address, std::span<uint8_t> out);
  // Reads and keeps the pages of [start, end) now (a thread's whole stack),
  // in few reads.
  void keep(uint64_t start, uint64_t end);
  // The readable pages kept, as runs of adjacent pages: what a core file holds.
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> keptRanges() const;
  // Drops the pages read so far: the process was running when they were read.
  void forget() { pages_.clear(); }
  // Reads the pages read so far again: for a core, which must hold them as
  // they are now, the process stopped.
  void refresh();
  // From now on, a page not read yet is read only inside `regions` (sorted),
  // or with readOutside, only outside them.
  void freeze(std::vector<MemoryRegion> regions, bool readOutside) {
    frozen_ = true;
    frozenRegions_ = std::move(regions);
    readOutside_ = readOutside;
  }
  size_t pagesKept() const { return pages_.size(); }

private:
  static constexpr uint64_t PageSize = 4096;
  using Page = std::array<uint8_t, PageSize>;
  // A page, read now if not kept; null when unreadable (also remembered).
  const Page *page(uint64_t number);
  bool readLive(uint64_t address, std::span<uint8_t> out);
  bool readPagesLive(uint64_t number, uint64_t count);
  bool readableAfterFreeze(uint64_t address) const {
    return (regionContaining(frozenRegions_, address) != nullptr) != readOutside_;
  }

  pid_t pid_;
  bool frozen_ = false;
  std::vector<MemoryRegion> frozenRegions_;
  bool readOutside_ = false;
  int memFile_ = -1; // /proc/PID/mem, opened when process_vm_readv is refused
  std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;
};

// The MemorySource a Target holds: shares the memory with the LiveProcess
// that freezes it.
class SharedProcessMemory : public MemorySource {
public:
  explicit SharedProcessMemory(std::shared_ptr<ProcessMemory> memory) : memory_(std::move(memory)) {}
  bool read(uint64_t address, std::span<uint8_t> out) const override { return memory_->read(address, out); }

private:
  std::shared_ptr<ProcessMemory> memory_;
};

} // namespace stackwalk::live
