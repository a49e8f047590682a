#include "stackwalk/core/CacheDirectory.h"

#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <vector>

using namespace llvm;

namespace stackwalk {
namespace {

// After an entry's bytes: its kind's magic, their length, their xxh3 (little-endian).
constexpr size_t TrailerSize = 24;

std::string join(std::initializer_list<StringRef> parts) {
  SmallString<256> out;
  for (StringRef part : parts) sys::path::append(out, part);
  return std::string(out);
}

} // namespace

CacheDirectory::CacheDirectory(std::string dir, std::string kind, std::string extension, std::array<char, 8> magic,
                               uint64_t maxBytes)
    : root_(join({dir, kind})), partial_(join({dir, ".partial"})), extension_(std::move(extension)), magic_(magic),
      maxBytes_(maxBytes) {}

std::string CacheDirectory::entryPath(ArrayRef<uint8_t> source) const {
  std::string key = toHex(BLAKE3::hash<16>(source), /*LowerCase=*/true);
  return join({root_, StringRef(key).take_front(2), StringRef(key).drop_front(2).str() + extension_});
}

StringRef CacheDirectory::body(const MemoryBuffer &entry) { return entry.getBuffer().drop_back(TrailerSize); }

std::unique_ptr<MemoryBuffer> CacheDirectory::read(const std::string &path) const { return readChecked(path, true); }

std::unique_ptr<MemoryBuffer> CacheDirectory::readUnhashed(const std::string &path) const {
  return readChecked(path, false);
}

std::unique_ptr<MemoryBuffer> CacheDirectory::readChecked(const std::string &path, bool hashed) const {
  auto buffer = readRegularFile(path);
  if (!buffer) return nullptr;
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < TrailerSize) return nullptr;
  StringRef contents = data.drop_back(TrailerSize), trailer = data.take_back(TrailerSize);
  if (std::memcmp(trailer.data(), magic_.data(), magic_.size()) != 0 ||
      support::endian::read64le(trailer.data() + 8) != contents.size() ||
      (hashed && support::endian::read64le(trailer.data() + 16) != xxh3_64bits(contents)))
    return nullptr;
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // recently read: kept longest
  return std::move(*buffer);
}

bool CacheDirectory::store(const std::string &path, ArrayRef<uint8_t> contents) const {
  char trailer[TrailerSize];
  std::memcpy(trailer, magic_.data(), magic_.size());
  support::endian::write64le(trailer + 8, contents.size());
  support::endian::write64le(trailer + 16, xxh3_64bits(contents));
  // Beside the entries (one file system, so the rename is atomic), not in
  // their folders: a reader sees a whole entry or none.
  if (sys::fs::create_directories(partial_) || sys::fs::create_directories(sys::path::parent_path(path))) return false;
  int fd = -1;
  SmallString<256> temporary;
  if (sys::fs::createUniqueFile(join({partial_, "entry-%%%%%%%%%%%%"}), fd, temporary)) return false;
  bool written;
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(reinterpret_cast<const char *>(contents.data()), contents.size());
    out.write(trailer, sizeof trailer);
    out.close();
    written = !out.has_error();
    if (!written) out.clear_error();
  }
  if (!written || sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return false;
  }
  evictBeyondLimit();
  return true;
}

// The least recently read entries go first, until the rest fit in maxBytes.
void CacheDirectory::evictBeyondLimit() const {
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(root_, ec), end; it != end && !ec; it.increment(ec)) {
    auto status = it->status();
    if (!status || status->type() != sys::fs::file_type::regular_file) continue;
    entries.push_back({it->path(), status->getSize(), status->getLastModificationTime()});
    total += status->getSize();
  }
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= maxBytes_) break;
    if (!sys::fs::remove(entry.path)) total -= entry.size;
  }
}

} // namespace stackwalk
