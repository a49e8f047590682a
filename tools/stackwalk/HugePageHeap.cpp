#include "HugePageHeap.h"

#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

namespace stackwalk {

// Why: a cold walk of a small core allocates a few MiB in small pieces (LLVM
// makes an object per compile unit of libc's debug info, 2,063 of them, before
// its first lookup), and every fresh 4 KiB page of heap is a page fault, about
// 10 us in the Firecracker VMs CI runs on: the walk of bench/small.py's
// threads-O2-nofp core took 920 faults (perf stat); with its heap in huge pages
// 390-720, and 4 ms less (medians of 31 alternating runs: 36.3 -> 32.3 ms).
//
// How: glibc's own switch for this (the tunable glibc.malloc.hugetlb=1) is
// read from the environment before main, and advises only single extensions
// of at least 2 MiB; the walk's heap grows 128 KiB at a time. So the heap is
// made to grow once by HeapReserve (M_TOP_PAD: address space only, no memory
// until touched), and that span, from its first 2 MiB boundary, is advised
// MADV_HUGEPAGE. The heap below that boundary, up to 2 MiB in 4 KiB pages,
// would hold most of a warm walk's heap (a few MiB): a block that is never
// used takes it, so that what is allocated next lies past the boundary. Heap
// faults of a warm walk: park-normal 154 -> 3, threads-O2-nofp 75 -> 3; wall
// time, medians of 21-31 alternating runs: warm park-normal 21.9 -> 17.9 ms,
// threads-O2-nofp 9.6 -> 8.4 ms, cold 40.0 -> 36.4 and 30.6 -> 27.0 ms
// (HugePageHeapTest checks where the next block lands). A heap that outgrows
// the span continues in 4 KiB pages.
//
// Cost: memory is taken 2 MiB at a time, so the peak can hold up to 2 MiB
// of heap not yet used (bench/small.py: 18.8 -> 20.4 MiB on threads-O2-nofp).
// M_TOP_PAD also stops glibc from raising its mmap threshold as it goes:
// blocks of 128 KiB and more are mapped and unmapped each time, as they are
// the first time without it. The skipped block is address space only.
//
// The walk's other threads (PrefetchedTwin's, inflating debug files) take
// their blocks from this heap too (M_ARENA_MAX 1): by default each got an
// arena of its own, in 4 KiB pages, and a fresh 4 KiB page costs its first
// touch about 12 us on this VM even when populated in advance (measured:
// MADV_POPULATE_WRITE 0.7 us a page, the touch after it 12-14 us). Those
// threads allocate little (an inflate state, a few buffers), so they seldom
// wait for the main thread's lock. A cold park-normal walk: 442 -> 410 page
// faults (perf stat, 20 runs).
namespace {

constexpr size_t HeapReserve = size_t(64) << 20;
constexpr uintptr_t HugePage = uintptr_t(2) << 20;
// Below glibc's mmap threshold (128 KiB, M_MMAP_THRESHOLD's initial value), so from the heap.
constexpr size_t DefaultMmapThreshold = size_t(128) << 10, HeapBlock = size_t(120) << 10;
constexpr size_t ChunkOverhead = 32; // glibc's chunk header, rounded up

uintptr_t heapEnd() { return reinterpret_cast<uintptr_t>(sbrk(0)); }

// Blocks from the heap, held until malloc has had to extend it (by
// HeapReserve): two are more than the free top of a fresh heap holds.
void growHeap() {
  uintptr_t before = heapEnd();
  void *volatile held[2] = {};
  for (void *volatile &block : held) {
    block = std::malloc(HeapBlock);
    if (block == nullptr || heapEnd() != before) break;
  }
  for (void *block : held) std::free(block);
}

// Where the next block taken from the heap's free top starts.
uintptr_t freeTop() {
  void *volatile probe = std::malloc(HeapBlock);
  auto at = reinterpret_cast<uintptr_t>(probe);
  std::free(probe);
  return at;
}

// Never freed: the heap between its free top and the first huge page.
// Volatile: nothing reads it, and GCC drops a malloc whose result is never
// used (it did here, until the disassembly showed no call).
void *volatile skipped = nullptr;

void skipTo(uintptr_t boundary) {
  uintptr_t top = freeTop();
  if (top >= boundary || boundary - top <= 2 * ChunkOverhead) return;
  // Up to 2 MiB: above the mmap threshold, so it is raised for this block.
  mallopt(M_MMAP_THRESHOLD, 2 * HugePage);
  skipped = std::malloc(boundary - top - ChunkOverhead);
  mallopt(M_MMAP_THRESHOLD, DefaultMmapThreshold);
}

} // namespace

void backHeapWithHugePages() {
  if (mallopt(M_TOP_PAD, HeapReserve) != 1) return;
  mallopt(M_ARENA_MAX, 1);
  uintptr_t before = heapEnd();
  growHeap();
  uintptr_t after = heapEnd();
  uintptr_t start = (before + HugePage - 1) & ~(HugePage - 1);
  if (before == uintptr_t(-1) || after <= start) return; // no brk heap (another malloc), or it did not grow
  if (madvise(reinterpret_cast<void *>(start), after - start, MADV_HUGEPAGE) != 0) return;
  skipTo(start);
}

} // namespace stackwalk
