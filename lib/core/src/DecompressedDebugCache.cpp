#include "stackwalk/core/DecompressedDebugCache.h"

#include "stackwalk/core/DebugSectionTwin.h"
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace stackwalk {
namespace {

// After the ELF bytes: magic, their length, their xxh3 (little-endian).
constexpr char TrailerMagic[8] = {'S', 'W', 'I', 'N', 'F', 'L', '0', '1'};
constexpr size_t TrailerSize = 24;

std::string join(std::initializer_list<StringRef> parts) {
  SmallString<256> out;
  for (StringRef part : parts) sys::path::append(out, part);
  return std::string(out);
}

} // namespace

DecompressedDebugCache::DecompressedDebugCache(std::string dir, uint64_t maxBytes)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {}

std::string DecompressedDebugCache::entryPath(ArrayRef<uint8_t> source) const {
  auto digest = BLAKE3::hash<16>(source);
  std::string key = toHex(digest, /*LowerCase=*/true);
  return join({dir_, ".inflated", StringRef(key).take_front(2), StringRef(key).drop_front(2).str() + ".debug"});
}

std::unique_ptr<ModuleImage> DecompressedDebugCache::twin(const ModuleImage &file, uint64_t maxDebugBytes) const {
  if (file.inMemory() || !hasCompressedSection(file)) return nullptr;
  std::string path = entryPath(arrayRefFromStringRef(file.object().getData()));
  if (auto cached = openChecked(path)) {
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // recently used: kept longest
    return cached;
  }
  auto bytes = debugSectionTwin(file, maxDebugBytes);
  if (!bytes) {
    consumeError(bytes.takeError());
    return nullptr;
  }
  if (store(path, *bytes)) {
    evictBeyondLimit();
    if (auto stored = openChecked(path)) return stored;
  }
  // The cache cannot keep it (read-only, full): the twin in memory still
  // spares LLVM's inflating.
  auto image = ModuleImage::fromBytes(std::move(*bytes), path);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

std::unique_ptr<ModuleImage> DecompressedDebugCache::openChecked(const std::string &path) const {
  auto buffer = readRegularFile(path);
  if (!buffer) return nullptr;
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < TrailerSize) return nullptr;
  StringRef body = data.drop_back(TrailerSize), trailer = data.take_back(TrailerSize);
  if (std::memcmp(trailer.data(), TrailerMagic, sizeof TrailerMagic) != 0 ||
      support::endian::read64le(trailer.data() + 8) != body.size() ||
      support::endian::read64le(trailer.data() + 16) != xxh3_64bits(body))
    return nullptr;
  // The check read every page; the walk needs few of them again.
  if ((*buffer)->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap) {
    uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    uintptr_t start = (uintptr_t(data.data()) + page - 1) & ~(page - 1), end = uintptr_t(data.end()) & ~(page - 1);
    if (start < end) madvise(reinterpret_cast<void *>(start), end - start, MADV_DONTNEED);
  }
  auto image = ModuleImage::fromFileBuffer(std::move(*buffer), path);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

bool DecompressedDebugCache::store(const std::string &path, const std::vector<uint8_t> &bytes) const {
  char trailer[TrailerSize];
  std::memcpy(trailer, TrailerMagic, sizeof TrailerMagic);
  support::endian::write64le(trailer + 8, bytes.size());
  support::endian::write64le(trailer + 16, xxh3_64bits(bytes));
  // Beside the entries (one file system, so the rename is atomic), not in
  // their folders: a reader sees a whole entry or none.
  std::string partial = join({dir_, ".partial"});
  if (sys::fs::create_directories(partial) || sys::fs::create_directories(sys::path::parent_path(path))) return false;
  int fd = -1;
  SmallString<256> temporary;
  if (sys::fs::createUniqueFile(join({partial, "inflated-%%%%%%%%%%%%"}), fd, temporary)) return false;
  bool written;
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    out.write(trailer, sizeof trailer);
    out.close();
    written = !out.has_error();
    if (!written) out.clear_error();
  }
  if (written && !sys::fs::rename(temporary, path)) return true;
  sys::fs::remove(temporary);
  return false;
}

// The least recently used entries go first, until the rest fit in maxBytes.
void DecompressedDebugCache::evictBeyondLimit() const {
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(join({dir_, ".inflated"}), ec), end; it != end && !ec;
       it.increment(ec)) {
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
