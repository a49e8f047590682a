// Breakpad symbol files' indexes kept by --symbol-cache: opening a symbol file
// passes over its whole text once to find where its records start (540 ms for
// a 356 MB file); the index that pass makes is stored, named by the text's
// contents (CacheDirectory.h), and a later walk of any dump that needs the
// same file reads it instead (BreakpadSymbolFile::withIndex). An entry that
// does not check, or does not fit the text, is made again.
#pragma once

#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/core/CacheDirectory.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace stackwalk {

class SymbolIndexCache {
public:
  static constexpr uint64_t DefaultMaxBytes = uint64_t(1) << 30;
  explicit SymbolIndexCache(std::string dir, uint64_t maxBytes = DefaultMaxBytes);

  // The symbol file at `path`, indexed from the cache when it holds the index
  // of the same text, else by a pass over it (and the index stored).
  llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> open(const std::string &path) const;
  // Where the index of a symbol file with this text lies.
  std::string entryPath(llvm::StringRef text) const;

private:
  CacheDirectory entries_;
};

} // namespace stackwalk
