// Reading a process's address space, as the dump and module files recorded it.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk {

class MemorySource {
public:
  virtual ~MemorySource() = default;

  // Fills all of `out` from `address`, or returns false and reads nothing
  // trustworthy. Never guesses: bytes the source does not hold are a failure.
  virtual bool read(uint64_t address, std::span<uint8_t> out) const = 0;

  // The bytes read() would give for [address, address + size), in place,
  // valid as long as the source: for a caller about to copy megabytes. Only
  // sources holding them contiguously in memory (a mapped core) answer.
  virtual std::optional<std::span<const uint8_t>> bytesInPlace(uint64_t address, uint64_t size) const {
    (void)address, (void)size;
    return std::nullopt;
  }

  template <typename T> std::optional<T> readValue(uint64_t address) const {
    T value;
    if (!read(address, {reinterpret_cast<uint8_t *>(&value), sizeof(T)}))
      return std::nullopt;
    return value;
  }
  std::optional<uint64_t> readPointer(uint64_t address, unsigned size) const;

  // A NUL-terminated string of at most maxLength bytes; nullopt when unreadable
  // or unterminated within the limit.
  std::optional<std::string> readCString(uint64_t address,
                                         size_t maxLength = 4096) const;
  // Whether every byte of [address, address + length) can be read, checked
  // through a small buffer: before copying a region whose size a dump claims,
  // nothing that size is allocated.
  bool readableThroughout(uint64_t address, uint64_t length) const;
};

// Memory held in byte buffers at chosen addresses: for tests, fuzz targets and
// small pieces of a dump that are copied rather than mapped.
class BufferMemory : public MemorySource {
public:
  void add(uint64_t address, std::vector<uint8_t> bytes);
  bool read(uint64_t address, std::span<uint8_t> out) const override;

private:
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> ranges_;
};

} // namespace stackwalk
