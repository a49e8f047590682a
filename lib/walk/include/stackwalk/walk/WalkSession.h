// What outlives one dump: module images with their symbols and call frame
// information, shared by the dumps one worker walks in turn. The caches are
// keyed by image, and the images stay in `images` for the whole session
// (ImageCache.h says what makes two images one), so nothing is forgotten
// between dumps. Members are destroyed caches first, images last.
#pragma once

#include "stackwalk/core/ImageCache.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/unwinder/CfiUnwinder.h"

#include <cstdint>

namespace stackwalk {

struct WalkSession {
  explicit WalkSession(uint64_t maxDebugBytes = uint64_t(2) << 30) : symbolizer(maxDebugBytes) {}

  ImageCache images;
  Symbolizer symbolizer;
  CfiUnwinder cfi;
};

} // namespace stackwalk
