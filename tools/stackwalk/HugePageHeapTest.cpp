// HugePageHeap's effect, in a process of its own (no test framework: what it
// allocates first would change the heap this checks): after
// backHeapWithHugePages, the next small block lies in the span advised
// MADV_HUGEPAGE, from the heap's first 2 MiB boundary (give or take its chunk
// header), not in the 4 KiB pages below it. A compiler that drops the never-used block (GCC did) fails this.
// And a block another thread takes lies in that heap too, not in an arena of the thread's own.
// Exit 77, skipped, where glibc's malloc is not the allocator (a sanitizer's).
#include "HugePageHeap.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>

int main() {
  constexpr uintptr_t HugePage = uintptr_t(2) << 20, ChunkHeaders = 64;
  auto heapEnd = [] { return reinterpret_cast<uintptr_t>(sbrk(0)); };
  uintptr_t before = heapEnd();
  stackwalk::backHeapWithHugePages();
  if (heapEnd() == before) {
    std::puts("skipped: the heap did not grow (not glibc's malloc, or M_TOP_PAD refused)");
    return 77;
  }
  uintptr_t boundary = (before + HugePage - 1) & ~(HugePage - 1);
  void *volatile block = std::malloc(64);
  auto at = reinterpret_cast<uintptr_t>(block);
  std::free(block);
  std::printf("heap end before %#zx, first 2 MiB boundary %#zx, next block at %#zx\n", size_t(before),
              size_t(boundary), size_t(at));
  bool inFirstHugePage = at + ChunkHeaders >= boundary && at < boundary + HugePage;
  if (!inFirstHugePage) {
    std::puts("FAILED: the next block is not in the first huge page");
    return 1;
  }
  uintptr_t threadBlock = 0;
  std::thread([&] {
    void *volatile block = std::malloc(64);
    threadBlock = reinterpret_cast<uintptr_t>(block);
    std::free(block);
  }).join();
  std::printf("another thread's block at %#zx, heap end %#zx\n", size_t(threadBlock), size_t(heapEnd()));
  bool inHeap = threadBlock >= boundary && threadBlock < heapEnd();
  std::puts(inHeap ? "ok" : "FAILED: another thread's block is not in the huge-page heap");
  return inHeap ? 0 : 1;
}
