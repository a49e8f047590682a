// Unwinding Windows x64 code of PE modules: the RUNTIME_FUNCTION covering the
// pc is found by binary search of the module's exception directory (.pdata),
// read through the target (dump memory, or the module file overlaid).
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <map>
#include <optional>

namespace stackwalk {

class Win64Unwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  struct Directory {
    uint32_t rva = 0, size = 0;
  };
  // The module's exception directory, from its PE headers; cached per base.
  std::optional<Directory> exceptionDirectory(const Module &module, const Target &target);

  std::map<uint64_t, std::optional<Directory>> directories_;
};

} // namespace stackwalk
