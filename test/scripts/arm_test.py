#!/usr/bin/env python3
"""32-bit ARM (armhf) Linux cores walked as eu-stack and gdb-multiarch walk them (issue 23).

Usage: arm_test.py STACKWALK

The test programs (cross_arch.py) are built for armhf (Thumb-2 code, Debian's
cross compilers; two threads programs also as ARM code, -marm) and run under qemu-arm, which writes the guest's ELF core: no
NT_FILE note and no ELF header page, so stackwalk places the executable by its
entry point (-e) and finds the libraries through the link map; the libraries'
CFI is in their debug files' compressed .debug_frame. Frames are compared with
eu-stack and gdb-multiarch, as cross_arch.py says. eu-stack stops at glibc's
signal restorer: sigcontext's thread in a handler is compared up to it, and past
it with the program's own record. A stripped program keeps only its .ARM.exidx
(built twice: Thumb-2 and ARM code): its frames must be those of its twin with DWARF. Where both tools stop at an
EXIDX_CANTUNWIND entry (cxx-throw), stackwalk's frames must begin with theirs,
and the program's own frames past it must be the functions its source calls there.
Each core is walked again without the libraries' files: no frame the walk with
them lacks (cross_arch.without_libraries_failures).

Skipped (77) without the cross compilers, qemu-arm, eu-stack, gdb-multiarch or the armhf libc.
"""
import os
import sys

import cross_arch

# Thumb code that C++ marks noexcept (std::terminate) is EXIDX_CANTUNWIND, and
# libgcc's _Unwind_RaiseException is assembly marked so too: gdb-multiarch and
# eu-stack stop there; stackwalk goes on by the frame pointer and the scan.
CANTUNWIND = "std::terminate's and _Unwind_RaiseException's exidx entries are EXIDX_CANTUNWIND"
# gdb-multiarch takes a caller's r0 to be its callee's (ARM's CFI leaves r0 to
# the default rule): read-park's wait_for_byte(fd) and r7-park's park(fd) show
# fd = -4, the -EINTR the interrupted system call left in r0; stackwalk says r0
# is not preserved there (read-park: and gives the entry value of main's call,
# 3). The args comparison on arm64 and i386, where gdb does not, holds.
R0_AFTER_READ = "gdb shows the fd argument as r0 after read's system call (-4, -EINTR), r0 being caller-saved"
ARM = cross_arch.Platform(name="arm", triplet="arm-linux-gnueabihf", libc="/lib/arm-linux-gnueabihf/libc.so.6",
                          gdb="gdb-multiarch", runner=["qemu-arm"], place_executable=True,
                          tools_stop_at_trampoline=True, thumb_bit=True,
                          outermost_stops=frozenset({"end_of_stack", "no_unwind_info"}),
                          tools_stop_early={"cxx-throw": CANTUNWIND},
                          # thrower's __cxa_throw, in libstdc++, calls _Unwind_RaiseException
                          own_frames_past_stop={"cxx-throw": ("thrower", "must_not_throw", "terminate_worker")},
                          gdb_args_wrong={"sigcontext": cross_arch.PTHREAD_KILL,
                                          "read-park": R0_AFTER_READ, "r7-park": R0_AFTER_READ})

# Plain C on armhf has no unwind tables: the stripped program is built with
# -funwind-tables (as Android builds everything), so stripping leaves it only
# its .ARM.exidx, which neither tool reads. Its twin, the same code with -g
# (.debug_frame) and not stripped, is walked by both: the stripped program's
# frames must be the twin's.
PROGRAMS = [p for p in cross_arch.PROGRAMS if p[0] != "stripped"] + [
    ("stripped-twin", "stripped.c", "-O2 -fomit-frame-pointer -funwind-tables -g", "park"),
    ("stripped", "stripped.c", "-O2 -fomit-frame-pointer -funwind-tables", "park"),
    # The same as ARM code: its .ARM.exidx entries unwind A32 prologues (r11 and lr
    # pushed with other registers, no Thumb bit on the return addresses).
    ("stripped-arm-twin", "stripped.c", "-O2 -fomit-frame-pointer -funwind-tables -g -marm", "park"),
    ("stripped-arm", "stripped.c", "-O2 -fomit-frame-pointer -funwind-tables -marm", "park"),
    # No unwind tables and r7 holding a record-like array: no frame at the ELF header.
    ("r7-park", "r7-park.c", "-O2 -fno-unwind-tables -fno-asynchronous-unwind-tables", "park"),
    # ARM (A32) code, not Debian's default Thumb-2: r11 as the frame pointer, 4-byte BL.
    ("threads-O0-fp-arm", "threads.c", "-O0 -g -marm -fno-omit-frame-pointer", "park"),
    ("threads-O2-arm", "threads.c", "-O2 -g -marm", "park"),
]


def offsets(report):
    """Each worker thread's frames as module+offset, sorted by thread (tids differ between
    runs; the main thread may be caught before or in its join)."""
    return sorted([f"{f['module']}+{f['module_offset']}" for f in cross_arch.physical(t)]
                  for t in report["threads"][1:])


def stripped_twin(name, report, reports, eu_stack):
    """A stripped program: its twin's frames, found by .ARM.exidx (None for the others)."""
    if not cross_arch.is_stripped(name):
        return None
    twin_name = f"{name}-twin"
    twin = [[frame.replace(f"{twin_name}+", f"{name}+") for frame in thread] for thread in offsets(reports[twin_name])]
    ours = offsets(report)
    by_exidx = [f for t in report["threads"] for f in cross_arch.physical(t)
                if f["module"] == name and f["trust"] == "unwind_info"]
    failures = [] if ours == twin else [f"{name}: {ours} vs its twin's {twin}"]
    if not by_exidx:
        failures.append(f"{name}: no frame of the program was found by its .ARM.exidx")
    print(f"{'ok  ' if not failures else 'FAIL'} {name}: its twin's frames, {len(by_exidx)} found by .ARM.exidx")
    return failures


if __name__ == "__main__":
    sys.exit(cross_arch.run(ARM, os.path.abspath(sys.argv[1]), cross_arch.qemu_capture(ARM), PROGRAMS, stripped_twin,
                            last=cross_arch.pthread_kill_and_without_libraries))
