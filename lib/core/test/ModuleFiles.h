// Test modules made of files on disk: an image, maybe with its separate debug
// file, as a module loaded where the image says; and where the unpacked test
// dumps keep glibc and its debug file (test/dumps, unpacked by the build).
#pragma once

#include "stackwalk/core/Module.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/Support/Path.h"

#include <memory>
#include <string>

namespace stackwalk::test {

inline std::shared_ptr<Module> moduleOf(const std::string &path, const std::string &debugPath = "") {
  auto image = ModuleImage::open(path);
  if (!image) {
    llvm::consumeError(image.takeError());
    return nullptr;
  }
  if (!debugPath.empty()) {
    auto debug = ModuleImage::open(debugPath);
    if (!debug) return llvm::consumeError(debug.takeError()), nullptr;
    (*image)->setDebugImage(std::move(*debug));
  }
  auto module = std::make_shared<Module>();
  module->name = llvm::sys::path::filename(path).str();
  module->base = (*image)->preferredBase();
  module->size = uint64_t(1) << 32;
  module->image = std::shared_ptr<ModuleImage>(std::move(*image));
  return module;
}

inline const std::string libcPath = std::string(STACKWALK_DUMPS_DIR) + "/sysroot/usr/lib/x86_64-linux-gnu/libc.so.6";
// Its zlib-compressed DWARF: 2,063 units, .debug_info 5.8 MB inflated.
inline const std::string libcDebugPath =
    std::string(STACKWALK_DUMPS_DIR) +
    "/sysroot/usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug";
// File addresses in that glibc: in __futex_abstimed_wait_common, whose unit
// lies 30% into .debug_info, and in clone3, whose unit lies at 72%.
constexpr uint64_t FutexWait = 0x85f16, Clone3 = 0x1098eb;

} // namespace stackwalk::test
