// Tail-call frames found between two frames, kept by --symbol-cache beside
// the symbol maps (SymbolMapCache.h). A map says where no tail call can lie
// without the DWARF; where one can, finding the frames means following the
// call-site records of both modules' DWARF (TailCalls.h), and what that
// found is kept here so that a later walk meeting the same two frames reads
// it instead.
//
// The result depends only on the two modules' contents and the two frames'
// addresses in them: an entry is named by the two symbol maps' identities
// and those file addresses, and checked as every cache entry is
// (CacheDirectory.h). Entries hold each frame's module (caller's or
// callee's), its file address, line and file.
#pragma once

#include "stackwalk/core/CacheDirectory.h"
#include "stackwalk/debuginfo/TailCalls.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk {

class TailCallCache {
public:
  static constexpr uint64_t DefaultMaxBytes = uint64_t(64) << 20;
  explicit TailCallCache(std::string dir, uint64_t maxBytes = DefaultMaxBytes);

  // Where the frames between physical frame `index` and its caller lie;
  // empty when either module has no symbol map to name it by.
  std::string entryPath(Symbolizer &symbolizer, std::span<const Frame> frames, size_t index) const;
  std::optional<std::vector<TailCallFrame>> read(const std::string &path, std::span<const Frame> frames,
                                                 size_t index) const;
  void store(const std::string &path, const std::vector<TailCallFrame> &found, std::span<const Frame> frames,
             size_t index) const;

private:
  CacheDirectory entries_;
};

} // namespace stackwalk
