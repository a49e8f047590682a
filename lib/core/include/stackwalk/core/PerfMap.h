// perf's JIT symbol maps (/tmp/perf-PID.map): "START SIZE name" per line, in
// hex, written by JITs (V8, the JVM with perf-map-agent, .NET with
// DOTNET_PerfMapEnabled) for code no file describes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class PerfMap {
public:
  struct Entry {
    uint64_t start = 0, size = 0;
    std::string name;
  };

  // Reads a map; malformed lines are skipped and counted, an unreadable file
  // gives nullopt.
  static std::optional<PerfMap> load(const std::string &path);
  static PerfMap parse(const std::string &text);

  // The entry covering an address; when entries overlap, the latest line wins,
  // as JITs append when they move or replace code.
  const Entry *lookup(uint64_t address) const;
  size_t size() const { return entries_.size(); }
  const std::vector<Entry> &entries() const { return entries_; } // in file order
  size_t malformedLines() const { return malformed_; }

private:
  // From `start` to the next stretch's start, the addresses `entry` covers
  // (NoEntry: none does).
  struct Stretch {
    uint64_t start;
    size_t entry;
  };
  static constexpr size_t NoEntry = SIZE_MAX;
  void divideAddresses();

  std::vector<Entry> entries_; // in file order
  std::vector<Stretch> stretches_; // sorted by start, each owned by the latest line covering it
  size_t malformed_ = 0;
};

} // namespace stackwalk
