// Minidump loading (every stream) and walking its threads; microdumps (Breakpad's
// text form of one, which the corpus seeds hold) through the same target.
#include "FuzzWalk.h"

#include "stackwalk/minidump/MicrodumpLoader.h"
#include "stackwalk/minidump/MinidumpLoader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto target = stackwalk::looksLikeMicrodump({data, size})
                    ? stackwalk::loadMicrodump(llvm::StringRef(reinterpret_cast<const char *>(data), size))
                    : stackwalk::loadMinidump(stackwalk::fuzz::dumpFileOf(data, size));
  if (!target) {
    llvm::consumeError(target.takeError());
    return 0;
  }
  stackwalk::fuzz::walkProcess(std::move(*target));
  return 0;
}
