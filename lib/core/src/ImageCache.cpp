#include "stackwalk/core/ImageCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"

namespace stackwalk {

std::shared_ptr<ModuleImage> ImageCache::file(const std::string &path) const {
  auto found = files_.find(path);
  return found == files_.end() ? nullptr : found->second;
}

std::shared_ptr<const BreakpadSymbolFile> ImageCache::symbolFile(const std::string &path) const {
  auto found = symbolFiles_.find(path);
  return found == symbolFiles_.end() ? nullptr : found->second;
}

void ImageCache::addSymbolFile(const std::string &path, std::shared_ptr<const BreakpadSymbolFile> file) {
  symbolFiles_[path] = std::move(file);
}

void ImageCache::addFile(const std::string &path, std::shared_ptr<ModuleImage> image) {
  files_[path] = std::move(image);
}

std::shared_ptr<ModuleImage> ImageCache::intern(std::shared_ptr<ModuleImage> image) {
  if (!image || !image->inMemory()) return image;
  llvm::BLAKE3Result<32> digest = llvm::BLAKE3::hash<32>(image->memoryBytes());
  std::string key = image->path() + '\0' + llvm::toHex(digest);
  auto [slot, inserted] = memory_.try_emplace(std::move(key), image);
  return slot->second;
}

} // namespace stackwalk
