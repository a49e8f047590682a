// Shared by the loader fuzz targets: walk every thread of a loaded target
// with the unwinders that need no module files, so fuzzed memory reaches them.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/unwinder/CfiUnwinder.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"
#include "stackwalk/unwinder/Win64Unwinder.h"

namespace stackwalk::fuzz {

inline void walkAllThreads(const Target &target) {
  CfiUnwinder cfi;
  Win64Unwinder win64;
  BadCallUnwinder badCall;
  FramePointerUnwinder framePointer;
  StackScanUnwinder scan(64);
  for (const ThreadInfo &thread : target.threads) {
    StackWalker walker(target, thread, {&cfi, &win64, &badCall, &framePointer, &scan}, WalkLimits{64});
    while (walker.next()) {
    }
  }
}

inline std::unique_ptr<llvm::MemoryBuffer> bufferOf(const uint8_t *data, size_t size) {
  return llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
}

} // namespace stackwalk::fuzz
