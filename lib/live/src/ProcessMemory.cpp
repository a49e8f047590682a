#include "ProcessMemory.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/uio.h>
#include <unistd.h>

namespace stackwalk::live {

ProcessMemory::~ProcessMemory() {
  if (memFile_ >= 0) close(memFile_);
}

bool ProcessMemory::readLive(uint64_t address, std::span<uint8_t> out) {
  iovec local{out.data(), out.size()};
  iovec remote{reinterpret_cast<void *>(address), out.size()};
  ssize_t got = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (got == ssize_t(out.size())) return true;
  // process_vm_readv is refused under some seccomp profiles and kernels
  // built without it; /proc/PID/mem reads the same for a tracer.
  if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
    if (memFile_ < 0) memFile_ = open(("/proc/" + std::to_string(pid_) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
    return memFile_ >= 0 && pread(memFile_, out.data(), out.size(), off_t(address)) == ssize_t(out.size());
  }
  return false;
}

const ProcessMemory::Page *ProcessMemory::page(uint64_t number) {
  auto kept = pages_.find(number);
  if (kept != pages_.end()) return kept->second.get();
  if (frozen_ && !readableAfterFreeze(number * PageSize)) return nullptr;
  auto bytes = std::make_unique<Page>();
  if (!readLive(number * PageSize, *bytes)) bytes.reset();
  return pages_.emplace(number, std::move(bytes)).first->second.get();
}

void ProcessMemory::keep(uint64_t start, uint64_t end) {
  constexpr uint64_t PagesAtOnce = 64; // a stack's used part is often a few pages: one read each
  uint64_t number = start / PageSize, last = (end + PageSize - 1) / PageSize;
  while (number < last) {
    uint64_t count = 0;
    while (count < PagesAtOnce && number + count < last && !pages_.contains(number + count)) ++count;
    if (count < 2 || !readPagesLive(number, count)) page(number++); // kept, alone, or a run with an unreadable page
    else number += count;
  }
}

// Pages [number, number + count) in one read, straight into the pages kept;
// false, keeping none, unless all are read.
bool ProcessMemory::readPagesLive(uint64_t number, uint64_t count) {
  std::vector<std::unique_ptr<Page>> read(count);
  std::vector<iovec> local(count);
  for (uint64_t i = 0; i < count; ++i) {
    read[i] = std::make_unique_for_overwrite<Page>();
    local[i] = {read[i]->data(), PageSize};
  }
  iovec remote{reinterpret_cast<void *>(number * PageSize), count * PageSize};
  if (process_vm_readv(pid_, local.data(), count, &remote, 1, 0) != ssize_t(count * PageSize)) return false;
  for (uint64_t i = 0; i < count; ++i) pages_.emplace(number + i, std::move(read[i]));
  return true;
}

void ProcessMemory::refresh() {
  std::vector<uint64_t> numbers;
  for (const auto &[number, bytes] : pages_) numbers.push_back(number);
  pages_.clear();
  for (uint64_t number : numbers) page(number);
}

std::vector<std::pair<uint64_t, std::vector<uint8_t>>> ProcessMemory::keptRanges() const {
  std::vector<uint64_t> numbers;
  for (const auto &[number, bytes] : pages_)
    if (bytes) numbers.push_back(number);
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> ranges;
  for (size_t i = 0; i < numbers.size(); ++i) {
    if (i == 0 || numbers[i] != numbers[i - 1] + 1) ranges.push_back({numbers[i] * PageSize, {}});
    const Page &bytes = *pages_.at(numbers[i]);
    ranges.back().second.insert(ranges.back().second.end(), bytes.begin(), bytes.end());
  }
  return ranges;
}

bool ProcessMemory::read(uint64_t address, std::span<uint8_t> out) {
  if (out.empty()) return true;
  if (address + out.size() < address) return false;
  // A large read (an assembly's metadata) in few reads, not one per page.
  if (!frozen_ && out.size() > PageSize) keep(address, address + out.size());
  size_t done = 0;
  while (done < out.size()) {
    uint64_t at = address + done;
    const Page *bytes = page(at / PageSize);
    if (!bytes) return false;
    size_t offset = at % PageSize, length = std::min<size_t>(PageSize - offset, out.size() - done);
    std::memcpy(out.data() + done, bytes->data() + offset, length);
    done += length;
  }
  return true;
}

} // namespace stackwalk::live
