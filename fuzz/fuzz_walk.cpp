// The whole walk of a dump of either format, as the command runs it: module
// images from the dump's memory, code registered at run time (GDB JIT,
// libunwind), the .NET runtime, every thread with its arguments, and the
// report printed as text, JSON and summary.
#include "FuzzWalk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto target = stackwalk::loadDump(stackwalk::fuzz::dumpFileOf(data, size));
  if (!target) {
    llvm::consumeError(target.takeError());
    return 0;
  }
  stackwalk::fuzz::walkProcess(std::move(*target), /*print=*/true);
  return 0;
}
