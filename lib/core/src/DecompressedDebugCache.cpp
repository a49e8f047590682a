#include "stackwalk/core/DecompressedDebugCache.h"

#include "stackwalk/core/DebugSectionTwin.h"

#include "llvm/ADT/StringExtras.h"

#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;

namespace stackwalk {

DecompressedDebugCache::DecompressedDebugCache(std::string dir, uint64_t maxBytes)
    : entries_(std::move(dir), ".inflated", ".debug", {'S', 'W', 'I', 'N', 'F', 'L', '0', '1'}, maxBytes) {}

std::string DecompressedDebugCache::entryPath(ArrayRef<uint8_t> source) const { return entries_.entryPath(source); }

std::unique_ptr<ModuleImage> DecompressedDebugCache::twin(const ModuleImage &file, uint64_t maxDebugBytes) const {
  if (file.inMemory() || !hasCompressedSection(file)) return nullptr;
  std::string path = entryPath(arrayRefFromStringRef(file.object().getData()));
  if (auto cached = openChecked(path)) return cached;
  auto bytes = debugSectionTwin(file, maxDebugBytes, TwinSections::All, path);
  if (!bytes) {
    consumeError(bytes.takeError());
    return nullptr;
  }
  if (entries_.store(path, arrayRefFromStringRef(StringRef((*bytes)->getBufferStart(), (*bytes)->getBufferSize()))))
    if (auto stored = openChecked(path)) return stored;
  // The cache cannot keep it (read-only, full): the twin in memory still
  // spares LLVM's inflating.
  auto image = ModuleImage::fromFileBuffer(std::move(*bytes), path);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

std::unique_ptr<ModuleImage> DecompressedDebugCache::openChecked(const std::string &path) const {
  std::unique_ptr<MemoryBuffer> buffer = entries_.read(path);
  if (!buffer) return nullptr;
  // The check read every page; the walk needs few of them again.
  if (buffer->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap) {
    StringRef data = buffer->getBuffer();
    uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    uintptr_t start = (uintptr_t(data.data()) + page - 1) & ~(page - 1), end = uintptr_t(data.end()) & ~(page - 1);
    if (start < end) madvise(reinterpret_cast<void *>(start), end - start, MADV_DONTNEED);
  }
  auto image = ModuleImage::fromFileBuffer(std::move(buffer), path);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

} // namespace stackwalk
