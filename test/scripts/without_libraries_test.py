#!/usr/bin/env python3
"""The project's Linux cores walked with each program's own file alone (issue 21).

Usage: without_libraries_test.py STACKWALK UNPACKED_DUMPS_DIR

Each core of test/dumps whose program is at hand is walked again with that file
only: an empty sysroot and --no-host-files, as a core from another machine whose
libraries are not at hand (a Linux core leaves their code out). The libraries'
frames are found by frame records and the scan, their callers' by the program's
CFI. Each thread's frames must be frames of the walk with every file, in the same
order (cross_arch.without_libraries_failures, which the arm64, i386 and ARM tests
run on their programs): a frame may be skipped, none invented. What it caught:
sighandler's thread in a handler returns into glibc's __restore_rt, whose CFI and
code were both missing, and a scan of the signal frame took a stale ld.so address
from its saved registers, before the rt_sigframe was recognised by its data.
"""
import tempfile

import cross_arch
import dumps


def main(stackwalk, unpacked, options):
    cores = dumps.cores_with_programs(unpacked)
    full = dumps.every_file_args(unpacked)
    with tempfile.TemporaryDirectory() as empty:
        failures = cross_arch.without_libraries_failures(stackwalk, cores, ["--sysroot", empty], full)
    return dumps.failures_summary(failures, f"{len(cores)} cores walked with their program's file alone")


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
