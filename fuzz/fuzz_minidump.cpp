// Minidump loading (every stream) and walking its threads.
#include "FuzzWalk.h"

#include "stackwalk/minidump/MinidumpLoader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto target = stackwalk::loadMinidump(stackwalk::fuzz::bufferOf(data, size));
  if (!target) {
    llvm::consumeError(target.takeError());
    return 0;
  }
  stackwalk::fuzz::walkProcess(std::move(*target));
  return 0;
}
