#!/usr/bin/env python3
"""The project's x86-64 cores walked with files whose unwind tables are gone (code analysis).

Usage: code_analysis_test.py STACKWALK UNPACKED_DUMPS_DIR

Each core is walked with the real files, whose walk is gdb's (oracle_gdb), and with
copies of every file that walk read whose .eh_frame, .eh_frame_hdr and .debug_frame
bytes are zeroed (without_cfi.py): frames are then found by analysing each
function's instructions from its symbol's start (CodeAnalysisUnwinder), the
fallbacks after it. Checked:

- no invented frame: each thread's frames are frames of the walk with CFI, in order;
- each thread's frames equal that walk's, but for those listed below, which end
  early where no symbol tells where a function starts;
- most frames past the first come from the analysis.

What it caught: glibc's epilogues put a tail call's arguments between their pops
(pthread_mutex_lock), a callback returns into JIT code (jit-libunwind), and a
handler returns into the signal trampoline, which no
call precedes (sighandler's threads); before the analysis, the static musl
program this was written for took two stale return addresses from the scan.
"""
import tempfile

import dumps
import without_cfi

# Threads whose walk without CFI ends before the walk with it, and why.
ENDS_EARLY = {
    "cxx-throw": "a frame in libgcc_s.so.1, whose function no symbol names (.dynsym only): no analysis, "
                 "and the scan finds no return address within its window",
}


def main(stackwalk, unpacked, options):
    cores = dumps.cores_with_programs(unpacked)
    full = dumps.every_file_args(unpacked)
    with tempfile.TemporaryDirectory() as root:
        failures, frames, analysed = without_cfi.failures(stackwalk, cores, root, ENDS_EARLY, {}, full)
    if analysed * 10 < frames * 7:
        failures.append(f"only {analysed} of {frames} frames past the first found by code analysis")
    return dumps.failures_summary(failures, f"{len(cores)} cores walked without CFI")


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
