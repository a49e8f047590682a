#include "stackwalk/core/Memory.h"

#include <algorithm>

namespace stackwalk {

std::optional<uint64_t> MemorySource::readPointer(uint64_t address, unsigned size) const {
  if (size == 4) {
    auto v = readValue<uint32_t>(address);
    return v ? std::optional<uint64_t>(*v) : std::nullopt;
  }
  return readValue<uint64_t>(address);
}

std::optional<std::string> MemorySource::readCString(uint64_t address, size_t maxLength) const {
  std::string out;
  uint8_t chunk[64];
  while (out.size() < maxLength) {
    // Read up to the next 64-byte boundary so a string ending just before an
    // unreadable page is still found.
    size_t n = 64 - (address % 64);
    if (!read(address, {chunk, n})) {
      // Fall back to single bytes at the edge of readable memory.
      if (!read(address, {chunk, 1})) return std::nullopt;
      n = 1;
    }
    for (size_t i = 0; i < n; ++i) {
      if (chunk[i] == 0) return out;
      out.push_back(char(chunk[i]));
    }
    address += n;
  }
  return std::nullopt;
}

bool MemorySource::readableThroughout(uint64_t address, uint64_t length) const {
  uint8_t scratch[0x10000];
  for (uint64_t done = 0; done < length;) {
    uint64_t piece = std::min<uint64_t>(sizeof scratch, length - done);
    if (!read(address + done, std::span(scratch, piece))) return false;
    done += piece;
  }
  return true;
}

void BufferMemory::add(uint64_t address, std::vector<uint8_t> bytes) {
  ranges_.emplace_back(address, std::move(bytes));
}

bool BufferMemory::read(uint64_t address, std::span<uint8_t> out) const {
  for (const auto &[start, bytes] : ranges_) {
    if (address < start || address - start > bytes.size() || out.size() > bytes.size() - (address - start))
      continue;
    if (!out.empty()) std::memcpy(out.data(), bytes.data() + (address - start), out.size()); // an empty span's data may be null
    return true;
  }
  return false;
}

} // namespace stackwalk
