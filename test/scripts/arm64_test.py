#!/usr/bin/env python3
"""arm64 Linux cores walked as eu-stack walks them (issue 22).

Usage: arm64_test.py STACKWALK

The test programs (cross_arch.py) are built for arm64 (Debian's cross compilers)
and run under qemu-aarch64, which writes the guest's ELF core: it has no NT_FILE
note and no ELF header page of any module, so stackwalk places the executable by
its entry point (-e) and finds the libraries through the link map. Frames are
compared with eu-stack (reading the arm64 libraries from their multiarch paths)
and gdb-multiarch, as cross_arch.py says. qemu-user gives arm64 guests a signal
trampoline without CFI, where eu-stack goes wrong and gdb-multiarch never returns:
sigcontext's thread in a handler is checked against the program's own record past
it. A program built with pointer authentication (return addresses signed on the
stack) must give the functions of its unsigned twin, which neither tool can check.
A wrong executable given with -e is refused (its dynamic section differs; a static
one, placed where it was linked, by its entry point or the read-only data qemu's core
holds of it). Each core
walked with its executable alone (no library file) gives no frame the walk with
them lacks.
Some of the cores are also written as Linux arm64 minidumps (CONTEXT_ARM64) and
walked with only the .sym files Breakpad's dump_syms makes of their modules, as
cross_arch_minidumps.py says: each thread's frames must be those of Breakpad's
minidump_stackwalk with the same files and have the instruction pointers of the
core's walk.

Skipped (77) without the cross compilers, qemu-user, eu-stack, gdb-multiarch or the arm64 libc.
"""
import os
import sys

import cross_arch
import cross_arch_minidumps

ARM64 = cross_arch.Platform(name="arm64", triplet="aarch64-linux-gnu", libc="/lib/aarch64-linux-gnu/libc.so.6",
                            gdb="gdb-multiarch", runner=["qemu-aarch64"], place_executable=True,
                            gdb_loops=frozenset({"sigcontext"}), tools_stop_at_trampoline=True)

PROGRAMS = cross_arch.PROGRAMS + [("crash-segv-pac", "crash-segv.c", "-O2 -g -mbranch-protection=standard", "crash"),
                                   ("crash-segv-static", "crash-segv.c", "-O2 -g -static", "crash"),
                                   ("crash-abort-static", "crash-abort.c", "-O0 -g -fno-omit-frame-pointer -static", "crash")]
# Programs built with pointer authentication (qemu's default cpu signs return
# addresses): neither eu-stack nor gdb-multiarch walks past a signed one
# without the NT_ARM_PAC_MASK note qemu does not write, so such a program is
# checked against its unsigned twin: each thread's functions, in order.
PAC_TWIN = {"crash-segv-pac": "crash-segv"}


def pac_twin(name, report, reports, eu_stack):
    """A signed program: the functions of its unsigned twin (None for the others)."""
    if name not in PAC_TWIN:
        return None
    failures = []
    signed = [a for frames in eu_stack.values() for a in frames if a >> 48]
    if not signed:
        failures.append(f"{name}: eu-stack shows no signed return address: pointer authentication is not exercised")
    ours = cross_arch.functions(report, name)
    theirs = cross_arch.functions(reports[PAC_TWIN[name]], PAC_TWIN[name])
    if ours != theirs:
        failures.append(f"{name}: {ours} vs its unsigned twin's {theirs}")
    print(f"{'ok  ' if not failures else 'FAIL'} {name}: the functions of its unsigned twin")
    return failures


def without_libraries_and_minidumps(stackwalk, cores):
    # A static executable has no dynamic section to check it by: another one is
    # refused by its entry point (UnwrittenDataIdentityTest checks the read-only data).
    return cross_arch.without_libraries_failures(stackwalk, cores) + \
        cross_arch_minidumps.breakpad_minidumps(ARM64, stackwalk, cores) + \
        cross_arch.wrong_executable(stackwalk, cores["crash-segv-static"][0], cores["crash-abort-static"][1])


if __name__ == "__main__":
    sys.exit(cross_arch.run(ARM64, os.path.abspath(sys.argv[1]), cross_arch.qemu_capture(ARM64), PROGRAMS, pac_twin,
                            last=without_libraries_and_minidumps))
