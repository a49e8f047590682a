// Symbol maps (SymbolMap.h) kept by --symbol-cache, one per image: the first
// walk that symbolizes an image makes its map from the symbol tables and
// DWARF, and later walks look frames up in it without opening either.
//
// An entry is named by what the map was made from: the image's and its
// separate debug file's build-ids and sizes (their whole contents when they
// have no build-id), and whether the DWARF was read at all (--max-debug-bytes).
// Entries are checked and written as every cache entry is (CacheDirectory.h):
// a damaged one is made again, never read.
#pragma once

#include "stackwalk/core/CacheDirectory.h"
#include "stackwalk/core/SymbolMap.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace stackwalk {

class ModuleImage;

// A map with the bytes it views.
struct LoadedSymbolMap {
  std::unique_ptr<llvm::MemoryBuffer> bytes;
  SymbolMap map;
  std::string path; // its entry's, which names what it was made from
};

class SymbolMapCache {
public:
  static constexpr uint64_t DefaultMaxBytes = uint64_t(1) << 30;
  explicit SymbolMapCache(std::string dir, uint64_t maxBytes = DefaultMaxBytes);

  // Where the map of this image lies; empty for an image rebuilt from a
  // dump's memory, whose contents depend on what the dump kept.
  std::string entryPath(const ModuleImage &image, bool readsDwarf) const;
  // The stored map when its entry checks.
  std::optional<LoadedSymbolMap> open(const std::string &path) const;
  // Stores a map; the map itself, read back or kept in memory when it cannot be stored.
  std::optional<LoadedSymbolMap> store(const std::string &path, std::string bytes) const;

private:
  CacheDirectory entries_;
};

} // namespace stackwalk
