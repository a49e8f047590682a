#include "stackwalk/core/SymbolIndexCache.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/StringExtras.h"

namespace stackwalk {

SymbolIndexCache::SymbolIndexCache(std::string dir, uint64_t maxBytes)
    : entries_(std::move(dir), ".symindex", ".index", {'S', 'W', 'S', 'Y', 'M', 'X', '0', '1'}, maxBytes) {}

std::string SymbolIndexCache::entryPath(llvm::StringRef text) const {
  return entries_.entryPath(llvm::arrayRefFromStringRef(text));
}

llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> SymbolIndexCache::open(const std::string &path) const {
  auto read = [&]() -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
    auto text = readRegularFile(path);
    if (!text) return fail("cannot read " + path + ": " + text.getError().message());
    return std::move(*text);
  };
  auto text = read();
  if (!text) return text.takeError();
  // Hashing the text is most of what a cached open costs: once per open.
  std::string entry = entryPath((*text)->getBuffer());
  if (std::unique_ptr<llvm::MemoryBuffer> index = entries_.read(entry)) {
    auto indexed = BreakpadSymbolFile::withIndex(std::move(*text), path,
                                                 llvm::arrayRefFromStringRef(CacheDirectory::body(*index)));
    if (indexed) return indexed;
    llvm::consumeError(indexed.takeError());
    // The refused index took the text with it; read again, it is named again.
    text = read();
    if (!text) return text.takeError();
    entry = entryPath((*text)->getBuffer());
  }
  auto parsed = BreakpadSymbolFile::parse(std::move(*text), path);
  if (parsed) entries_.store(entry, (*parsed)->serializedIndex());
  return parsed;
}

} // namespace stackwalk
