// What outlives one dump: module files with their symbols and call frame
// information, shared by the dumps one worker walks in turn.
#pragma once

#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/unwinder/CfiUnwinder.h"

#include <cstdint>

namespace stackwalk {

struct WalkSession {
  explicit WalkSession(uint64_t maxDebugBytes = uint64_t(2) << 30) : symbolizer(maxDebugBytes) {}

  ImageCache images;
  Symbolizer symbolizer;
  CfiUnwinder cfi;

  // Drops what belongs to this dump only: images copied from its memory (the
  // vDSO), whose addresses a later dump's images may reuse.
  void endDump(const Target &target);
};

} // namespace stackwalk
