#include "stackwalk/core/SymbolMapCache.h"

#include "stackwalk/core/ModuleImage.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace stackwalk {
namespace {

// A file's part of the entry's name: its build-id and size, or its contents.
void appendIdentity(std::string &out, const ModuleImage &file) {
  StringRef contents = file.object().getData();
  if (file.buildId().empty()) {
    out += "contents:" + utostr(contents.size()) + ":";
    out += contents;
  } else {
    out += "build-id:" + toHex(file.buildId()) + ":size:" + utostr(contents.size());
  }
  out += ";";
}

std::optional<LoadedSymbolMap> viewed(std::unique_ptr<MemoryBuffer> bytes, StringRef body, const std::string &path) {
  auto map = SymbolMap::view(body);
  if (!map) return consumeError(map.takeError()), std::nullopt;
  return LoadedSymbolMap{std::move(bytes), *map, path};
}

} // namespace

SymbolMapCache::SymbolMapCache(std::string dir, uint64_t maxBytes)
    : entries_(std::move(dir), ".symmap", ".map", {'S', 'W', 'S', 'Y', 'M', 'M', '0', '2'}, maxBytes) {}

std::string SymbolMapCache::entryPath(const ModuleImage &image, bool readsDwarf) const {
  if (image.inMemory()) return "";
  // Its number changes with what a map holds, its names included: a map made
  // before Rust's legacy names and D's were demangled (3), or before PLT
  // stubs were named and a size-0 symbol ended with its section (4), is not read.
  std::string identity = "stackwalk symbol map 4;image:";
  appendIdentity(identity, image);
  if (const ModuleImage *debug = image.debugImage()) {
    if (debug->inMemory()) return "";
    identity += "debug file:";
    appendIdentity(identity, *debug);
  }
  identity += readsDwarf ? "dwarf" : "no dwarf";
  return entries_.entryPath(arrayRefFromStringRef(identity));
}

std::optional<LoadedSymbolMap> SymbolMapCache::open(const std::string &path) const {
  // The map checks each 4 KiB it reads (SymbolMap.h).
  std::unique_ptr<MemoryBuffer> entry = entries_.readUnhashed(path);
  if (!entry) return std::nullopt;
  StringRef body = CacheDirectory::body(*entry);
  return viewed(std::move(entry), body, path);
}

std::optional<LoadedSymbolMap> SymbolMapCache::store(const std::string &path, std::string bytes) const {
  if (entries_.store(path, arrayRefFromStringRef(bytes)))
    if (auto stored = open(path)) return stored;
  auto buffer = MemoryBuffer::getMemBufferCopy(bytes, "symbol map");
  StringRef body = buffer->getBuffer();
  return viewed(std::move(buffer), body, path);
}

} // namespace stackwalk
