// The main heap in transparent huge pages, for a process that lives a few
// tens of milliseconds. See HugePageHeap.cpp for why and what it costs.
#pragma once

namespace stackwalk {

// Asks glibc's malloc to grow the heap in one large step now and the kernel
// to back that span with 2 MiB pages. Under another allocator (as under
// AddressSanitizer) nothing changes; with transparent huge pages off, only the
// reservation and the skipped block (address space, never touched) are made.
// Called once, first thing in main, before the walk allocates.
void backHeapWithHugePages();

} // namespace stackwalk
