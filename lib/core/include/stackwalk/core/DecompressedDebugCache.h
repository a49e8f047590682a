// Debug files whose DWARF sections are compressed (Debian's -dbg packages,
// most distributions' debug files, debuginfod's) kept decompressed on disk.
//
// LLVM's DWARFContext inflates every compressed section of a file when it is
// created, whatever the walk then reads: libc's debug file is 4 MB of zlib
// that take 35-40 ms to inflate, most of a small dump's walk. A file's
// decompressed twin (an ELF file of its .debug_* sections, decompressed by
// LLVM's Decompressor) is mapped instead, so a walk reads only the pages it
// touches.
//
// An entry is named by the BLAKE3 hash of the whole source file (what the
// twin is made from, not a build-id a stripped and an unstripped file share)
// and ends with a trailer holding its length and xxh3 checksum, checked on
// every use: a truncated or corrupt entry is made again, never read. Entries
// are written to a temporary file and renamed, so walks can share the cache;
// past maxBytes the least recently used entries are removed.
#pragma once

#include "stackwalk/core/ModuleImage.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace stackwalk {

// A linked 64-bit little-endian ELF file's DWARF sections, decompressed, as
// an ELF file of their own, in memory; an error when it has no compressed
// section, when they claim more than maxDebugBytes uncompressed
// (ModuleImage::debugInfoBytes), or they cannot be read.
llvm::Expected<llvm::SmallVector<char, 0>> decompressDebugSections(const ModuleImage &file, uint64_t maxDebugBytes);

class DecompressedDebugCache {
public:
  static constexpr uint64_t DefaultMaxBytes = uint64_t(4) << 30;
  explicit DecompressedDebugCache(std::string dir, uint64_t maxBytes = DefaultMaxBytes);

  // The twin of `file` (a file on disk with compressed sections): the cached
  // one when it checks, else made now and stored. Null when the file needs
  // none, or no twin can be made or stored (LLVM then decompresses as ever).
  // Sections claiming more than maxDebugBytes uncompressed are not read.
  std::unique_ptr<ModuleImage> twin(const ModuleImage &file, uint64_t maxDebugBytes) const;
  // Where the entry for a file with these contents lies.
  std::string entryPath(llvm::ArrayRef<uint8_t> source) const;

private:
  std::unique_ptr<ModuleImage> openChecked(const std::string &path) const;
  bool store(const std::string &path, llvm::SmallVector<char, 0> bytes) const;
  void evictBeyondLimit() const;

  std::string dir_;
  uint64_t maxBytes_;
};

} // namespace stackwalk
