// Symbol maps as --symbol-cache keeps them (SymbolMap.h): any bytes viewed as
// a map, every lookup (frames at addresses through its ranges, call sites
// where tail calls may start, tail-calling names) bounds-checked.
#include "stackwalk/core/SymbolMap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto map = stackwalk::SymbolMap::view(bytes);
  if (!map) {
    llvm::consumeError(map.takeError());
    return 0;
  }
  uint64_t addresses[] = {0, 1, 0x1000, 0x1015, 0x1025, size, UINT64_MAX};
  for (uint64_t address : addresses) {
    (void)map->framesAt(address);
    (void)map->mayStartTailCalls(address, &*map);
    (void)map->mayStartTailCalls(address, nullptr);
  }
  for (const char *name : {"", "main", "pthread_join", "\xff"}) (void)map->isTailCallingName(name);
  return 0;
}
