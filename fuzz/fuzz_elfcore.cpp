// ELF core loading, module identity reads from memory, and walking its threads.
#include "FuzzWalk.h"

#include "stackwalk/elfcore/ElfCoreLoader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto target = stackwalk::loadElfCore(stackwalk::fuzz::dumpFileOf(data, size));
  if (!target) {
    llvm::consumeError(target.takeError());
    return 0;
  }
  stackwalk::fuzz::walkProcess(std::move(*target));
  return 0;
}
