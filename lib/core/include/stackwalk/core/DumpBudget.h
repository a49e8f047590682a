// How much a single dump may make stackwalk copy out of its memory, whatever
// its structures claim: the images that exist only in the dump (GDB JIT
// objects, PE images rebuilt from a full-memory dump, the vDSO) are copies,
// and a crafted dump can name thousands of them. Each dump's Target has one;
// what does not fit is left out with a warning, and the walk goes on.
#pragma once

#include <cstdint>

namespace stackwalk {

class DumpBudget {
public:
  static constexpr uint64_t DefaultCopiedImageBytes = uint64_t(1) << 30;

  explicit DumpBudget(uint64_t copiedImageBytes = DefaultCopiedImageBytes) : copiedLeft_(copiedImageBytes) {}

  // Takes `bytes` for an image copied from the dump; false, taking nothing, when they do not fit.
  bool takeCopiedImage(uint64_t bytes) {
    if (bytes > copiedLeft_) return false;
    copiedLeft_ -= bytes;
    return true;
  }
  uint64_t copiedImageBytesLeft() const { return copiedLeft_; }

private:
  uint64_t copiedLeft_;
};

} // namespace stackwalk
