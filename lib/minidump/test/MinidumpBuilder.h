// Builds small minidumps byte by byte, for tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk::test {

class MinidumpBuilder {
public:
  // Appends data to the file body and returns its RVA.
  uint32_t add(const std::vector<uint8_t> &bytes) {
    uint32_t rva = uint32_t(body_.size() + headerSize());
    body_.insert(body_.end(), bytes.begin(), bytes.end());
    while (body_.size() % 4) body_.push_back(0);
    return rva;
  }
  uint32_t addString(const std::string &ascii) {
    std::vector<uint8_t> bytes;
    put32(bytes, uint32_t(ascii.size() * 2));
    for (char c : ascii) {
      bytes.push_back(uint8_t(c));
      bytes.push_back(0);
    }
    bytes.push_back(0);
    bytes.push_back(0);
    return add(bytes);
  }
  void stream(uint32_t type, const std::vector<uint8_t> &bytes) { streams_.push_back({type, bytes}); }
  // A stream whose directory entry claims `size` bytes at `rva`, whatever is there.
  void rawDirectoryEntry(uint32_t type, uint32_t size, uint32_t rva) { raw_.push_back({type, size, rva}); }

  std::vector<uint8_t> build() {
    // Stream payloads go after the fixed-size header and directory.
    std::vector<std::pair<uint32_t, std::pair<uint32_t, uint32_t>>> entries;
    for (auto &[type, bytes] : streams_) entries.push_back({type, {uint32_t(bytes.size()), add(bytes)}});
    for (auto &[type, size, rva] : raw_) entries.push_back({type, {size, rva}});
    std::vector<uint8_t> out;
    put32(out, 0x504d444d);
    put32(out, 0xa793);
    put32(out, uint32_t(entries.size()));
    put32(out, 32);
    put32(out, 0);
    put32(out, 0);
    put32(out, 0);
    put32(out, 0);
    for (auto &[type, location] : entries) {
      put32(out, type);
      put32(out, location.first);
      put32(out, location.second);
    }
    out.resize(headerSize(), 0);
    out.insert(out.end(), body_.begin(), body_.end());
    return out;
  }

  static void put16(std::vector<uint8_t> &out, uint16_t v) { putN(out, v, 2); }
  static void put32(std::vector<uint8_t> &out, uint32_t v) { putN(out, v, 4); }
  static void put64(std::vector<uint8_t> &out, uint64_t v) { putN(out, v, 8); }

private:
  static void putN(std::vector<uint8_t> &out, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
  }
  // Room for 32 directory entries keeps RVAs known before build().
  static size_t headerSize() { return 32 + 12 * 32; }

  struct Raw {
    uint32_t type, size, rva;
  };
  std::vector<uint8_t> body_;
  std::vector<std::pair<uint32_t, std::vector<uint8_t>>> streams_;
  std::vector<Raw> raw_;
};

} // namespace stackwalk::test
