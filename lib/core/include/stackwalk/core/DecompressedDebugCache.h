// Debug files whose DWARF sections are compressed (Debian's -dbg packages,
// most distributions' debug files, debuginfod's) kept decompressed on disk.
//
// A file's decompressed twin (DebugSectionTwin.h) is stored on disk and
// mapped by later walks, which then inflate nothing and read only the pages
// they touch.
//
// Entries (CacheDirectory.h) are named by the whole source file, whose twin
// they are, and checked on every use: a truncated or corrupt one is made
// again, never read.
#pragma once

#include "stackwalk/core/CacheDirectory.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk {

class DecompressedDebugCache {
public:
  static constexpr uint64_t DefaultMaxBytes = uint64_t(4) << 30;
  explicit DecompressedDebugCache(std::string dir, uint64_t maxBytes = DefaultMaxBytes);

  // The twin of `file` (a file on disk with compressed sections): the cached
  // one when it checks, else made now and stored (kept in memory when it
  // cannot be stored). Null when the file needs none or none can be made.
  // Sections claiming more than maxDebugBytes uncompressed are not read.
  std::unique_ptr<ModuleImage> twin(const ModuleImage &file, uint64_t maxDebugBytes) const;
  // Where the entry for a file with these contents lies.
  std::string entryPath(llvm::ArrayRef<uint8_t> source) const;

private:
  std::unique_ptr<ModuleImage> openChecked(const std::string &path) const;

  CacheDirectory entries_;
};

} // namespace stackwalk
