// One kind of entry that --symbol-cache keeps (decompressed debug files,
// Breakpad symbol files' indexes), in a folder of its own under the cache.
//
// An entry is named by the BLAKE3 hash of what it is made from (its source's
// whole contents: not a build-id or path that two different files can share)
// and ends with a trailer holding a magic of its kind, its length and its
// xxh3 checksum, checked on every read: a truncated, corrupt or foreign entry
// is not read, and the caller makes it again. Entries are written to a
// temporary file and renamed, so walks can share the cache; past maxBytes the
// least recently read entries of the kind are removed.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace stackwalk {

class CacheDirectory {
public:
  // Entries under DIR/KIND/, each named xx/yyyy...EXTENSION; magic: 8 bytes.
  CacheDirectory(std::string dir, std::string kind, std::string extension, std::array<char, 8> magic,
                 uint64_t maxBytes);

  // Where the entry made from `source` lies.
  std::string entryPath(llvm::ArrayRef<uint8_t> source) const;
  // The entry's file, trailer included, when its trailer checks; marks it
  // recently read. Null when there is none or it does not check.
  std::unique_ptr<llvm::MemoryBuffer> read(const std::string &path) const;
  // The same, checking the trailer's magic and length but not its checksum,
  // which reads every page: for entries whose reader checks what it reads
  // (symbol maps check each 4 KiB they read).
  std::unique_ptr<llvm::MemoryBuffer> readUnhashed(const std::string &path) const;
  // An entry's contents without its trailer.
  static llvm::StringRef body(const llvm::MemoryBuffer &entry);
  // Writes an entry (then removes the least recently read past the limit);
  // false when it cannot be written.
  bool store(const std::string &path, llvm::ArrayRef<uint8_t> body) const;

private:
  std::unique_ptr<llvm::MemoryBuffer> readChecked(const std::string &path, bool hashed) const;
  void evictBeyondLimit() const;

  std::string root_, partial_, extension_;
  std::array<char, 8> magic_;
  uint64_t maxBytes_;
};

} // namespace stackwalk
