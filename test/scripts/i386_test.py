#!/usr/bin/env python3
"""i386 Linux cores walked as eu-stack and gdb walk them (issue 23).

Usage: i386_test.py STACKWALK

The test programs (cross_arch.py) are built for i386 (Debian's i686 cross
compilers) and run natively: the kernel writes their cores (core_pattern `core`),
with NT_FILE and the modules' ELF headers, as for 64-bit programs. A kernel built
without IA32 emulation (exec fails with ENOEXEC; CI's) runs none: there they run
under qemu-i386, whose cores have no NT_FILE (the executable is placed by its
entry point, the libraries found through the link map), as arm_test.py's. Frames are
compared with eu-stack and gdb (Debian's reads i386 cores, with the i386 libc's
debug files from libc6-dbg:i386), as cross_arch.py says; sigcontext's thread in a
handler is also checked against the program's own record past glibc's trampoline.
gdb names the wrong pthread_kill in sigcontext (below): there the truth is checked.
Each core is walked again without the libraries' files: no frame the walk with
them lacks (cross_arch.without_libraries_failures).

Skipped (77) without the i686 cross compilers, eu-stack, gdb or the i386 libc, when
the kernel runs i386 programs but its core_pattern is not a plain file name, or
when it runs none and qemu-i386 is not installed.
"""
import dataclasses
import os
import sys

import cross_arch
import dumps

I386 = cross_arch.Platform(name="i386", triplet="i686-linux-gnu", libc="/lib/i386-linux-gnu/libc.so.6", gdb="gdb",
                           runner=[], gdb_args_wrong={"sigcontext": cross_arch.PTHREAD_KILL})
I386_QEMU = dataclasses.replace(I386, runner=["qemu-i386"], place_executable=True)


def capture(exe, mode, workdir):
    """Runs the program until the kernel writes its core into `workdir`."""
    return cross_arch.capture_core(I386, exe, mode, workdir, lambda f: f == "core" or f.startswith("core."))


def core_pattern_is_a_file():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        return False
    return not pattern.startswith("|") and "/" not in pattern


if __name__ == "__main__":
    stackwalk = os.path.abspath(sys.argv[1])
    last = cross_arch.pthread_kill_and_without_libraries
    if dumps.kernel_runs_i386():
        if not core_pattern_is_a_file():
            print("SKIP: the kernel's core_pattern does not write a core beside the program")
            sys.exit(77)
        sys.exit(cross_arch.run(I386, stackwalk, capture, last=last))
    print("this kernel does not run i386 programs (no IA32 emulation): they run under qemu-i386")
    sys.exit(cross_arch.run(I386_QEMU, stackwalk, cross_arch.qemu_capture(I386_QEMU), last=last))
