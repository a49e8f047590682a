// Code the process generated at run time and described outside its module
// files, found in one step and kept in one place: objects registered through
// the GDB JIT interface (they become modules of the target, with symbols and
// CFI like any other), procedures registered with libunwind's
// _U_dyn_register, and a perf map's names.
#pragma once

#include "stackwalk/core/ImageCache.h"
#include "stackwalk/core/PerfMap.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/unwinder/LibunwindDynamic.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class RegisteredCode {
public:
  // Adds the GDB JIT objects to the target's modules (their images become
  // the session's `images`), reads libunwind's registrations from its
  // memory, and loads the perf map `perfMapPath` (none when empty). What
  // cannot be read becomes a warning.
  static RegisteredCode find(Target &target, const std::string &perfMapPath, ImageCache &images,
                             std::vector<std::string> &warnings);

  // Unwinds the procedures registered with libunwind.
  Unwinder &dynamicUnwinder() { return *dynamic_; }

  struct Name {
    std::string function;
    uint64_t start = 0;
  };
  // What libunwind's registration or the perf map calls the code at an
  // address outside every module.
  std::optional<Name> nameAt(uint64_t address) const;

private:
  std::unique_ptr<LibunwindDynamicUnwinder> dynamic_;
  std::optional<PerfMap> perfMap_;
};

} // namespace stackwalk
