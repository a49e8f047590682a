// What outlives one dump: module images with their symbols and call frame
// information, shared by the dumps one worker walks in turn. The caches are
// keyed by image, and the images stay in `images` for the whole session
// (ImageCache.h says what makes two images one), so nothing is forgotten
// between dumps. Members are destroyed caches first, images last.
#pragma once

#include "stackwalk/core/DecompressedDebugCache.h"
#include "stackwalk/core/ImageCache.h"
#include "stackwalk/core/SymbolIndexCache.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/debuginfo/TailCallCache.h"
#include "stackwalk/debuginfo/TailCallMemo.h"
#include "stackwalk/unwinder/CfiUnwinder.h"

#include <cstdint>
#include <memory>
#include <string>

namespace stackwalk {

struct WalkSession {
  // With a symbol cache directory, compressed DWARF is read through its
  // decompressed twins there (DecompressedDebugCache.h), and Breakpad symbol
  // files are indexed from there (SymbolIndexCache.h), and ELF images'
  // frames are looked up in symbol maps there (SymbolMapCache.h), and tail-call
  // frames found kept there (TailCallCache.h). readsVariables: the
  // walks read function arguments (--args).
  explicit WalkSession(uint64_t maxDebugBytes = uint64_t(2) << 30, const std::string &symbolCache = "",
                       bool readsVariables = true)
      : inflated(symbolCache.empty() ? nullptr : std::make_unique<DecompressedDebugCache>(symbolCache)),
        symbolIndexes(symbolCache.empty() ? nullptr : std::make_unique<SymbolIndexCache>(symbolCache)),
        symbolMaps(symbolCache.empty() ? nullptr : std::make_unique<SymbolMapCache>(symbolCache)),
        tailCalls(symbolCache.empty() ? nullptr : std::make_unique<TailCallCache>(symbolCache)),
        symbolizer(maxDebugBytes, inflated.get(), readsVariables, symbolMaps.get()) {}

  std::unique_ptr<const DecompressedDebugCache> inflated;
  std::unique_ptr<const SymbolIndexCache> symbolIndexes;
  std::unique_ptr<const SymbolMapCache> symbolMaps;
  std::unique_ptr<const TailCallCache> tailCalls;
  ImageCache images;
  Symbolizer symbolizer;
  CfiUnwinder cfi;
  TailCallMemo tailCallMemo; // tail-call frames found in earlier dumps
};

} // namespace stackwalk
