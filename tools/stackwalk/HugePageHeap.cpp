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
// MADV_HUGEPAGE. A heap that outgrows it continues in 4 KiB pages.
//
// Cost: memory is taken 2 MiB at a time, so the peak can hold up to 2 MiB
// of heap not yet used (bench/small.py: 18.8 -> 20.4 MiB on threads-O2-nofp).
// M_TOP_PAD also stops glibc from raising its mmap threshold as it goes:
// blocks of 128 KiB and more are mapped and unmapped each time, as they are
// the first time without it.
void backHeapWithHugePages() {
  constexpr size_t HeapReserve = size_t(64) << 20;
  constexpr uintptr_t HugePage = uintptr_t(2) << 20;
  if (mallopt(M_TOP_PAD, HeapReserve) != 1) return;
  auto before = reinterpret_cast<uintptr_t>(sbrk(0));
  // A block from the heap (below the mmap threshold) makes malloc extend it now.
  void *volatile grow = std::malloc(64 << 10);
  std::free(grow);
  auto after = reinterpret_cast<uintptr_t>(sbrk(0));
  uintptr_t start = (before + HugePage - 1) & ~(HugePage - 1);
  if (before == uintptr_t(-1) || after <= start) return; // no brk heap (another malloc), or it did not grow
  madvise(reinterpret_cast<void *>(start), after - start, MADV_HUGEPAGE);
}

} // namespace stackwalk
