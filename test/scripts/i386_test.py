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
them lacks (cross_arch.without_libraries_failures); and with copies of every file
whose CFI is zeroed, by code analysis (without_cfi.py). Some cores are also written as
Linux x86 minidumps (CONTEXT_X86) and walked with the .sym files alone, as
cross_arch_minidumps.py says; past main (REALIGNED_MAIN) Breakpad's frames are wrong, and
theirs are not compared with ours there.

Skipped (77) without the i686 cross compilers, eu-stack, gdb or the i386 libc, when
the kernel runs i386 programs but its core_pattern is not a plain file name, or
when it runs none and qemu-i386 is not installed.
"""
import dataclasses
import json
import os
import subprocess
import sys
import tempfile

import cross_arch
import cross_arch_minidumps
import dumps
import without_cfi

# GCC realigns main's stack on i386 (and $-16, %esp) and describes its frame by DWARF
# expressions, which dump_syms cannot write: main's STACK CFI is its entry rule alone,
# so walks with .sym files take main's caller by the frame pointer, whose frame record
# lies below the alignment. Breakpad's walk takes the caller's stack pointer just past
# the record, up to 16 bytes short, and the caller's CFI then reads the stack
# protector's canary as a return address; stackwalk's frame-pointer step finds the
# original return address past the alignment (FallbackUnwinders.cpp).
REALIGNED_MAIN = {"main": "it takes main's caller's stack pointer from below main's stack realignment"}
I386 = cross_arch.Platform(name="i386", triplet="i686-linux-gnu", libc="/lib/i386-linux-gnu/libc.so.6", gdb="gdb",
                           runner=[], gdb_args_wrong={"sigcontext": cross_arch.PTHREAD_KILL},
                           breakpad_wrong_past=REALIGNED_MAIN)
I386_QEMU = dataclasses.replace(I386, runner=["qemu-i386"], place_executable=True)
# i386's position-independent code, whose get-pc thunks leave dead return
# addresses (thunk-park: one was taken above libc's frame), and a handler whose
# callers reach the vDSO's signal trampoline (handler-park).
PROGRAMS = cross_arch.PROGRAMS + [("thunk-park", "thunk-park.c", "-O2 -g", "park"),
                                  ("handler-park", "handler-park.c", "-O2 -g", "park")]


def capture(exe, mode, workdir):
    """Runs the program until the kernel writes its core into `workdir`."""
    return cross_arch.capture_core(I386, exe, mode, workdir, lambda f: f == "core" or f.startswith("core."))


def handler_crossed_without_libraries(stackwalk, cores):
    """handler-park walked without libc's file: the scan above libc's frame takes
    block's return address (its callers by CFI reach the vDSO's __kernel_rt_sigreturn,
    which follows no call, as a handler's return address does), and the walk goes on
    through the signal frame (it once ended at libc's frame)."""
    core, exe = cores["handler-park"]
    out = subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", "--no-host-files"],
                         capture_output=True, text=True, timeout=120)
    frames = cross_arch.physical(json.loads(out.stdout)["threads"][0]) if out.returncode == 0 else []
    at = next((i for i, f in enumerate(frames) if f["signal_trampoline"]), None)
    crossed = bool(at) and frames[at - 1]["function"] == "block" and len(frames) > at + 1
    print(f"{'ok  ' if crossed else 'FAIL'} handler-park without its libraries: block, the signal frame and "
          f"{len(frames) - at - 1 if crossed else 0} frame(s) past it")
    return [] if crossed else [f"handler-park without its libraries: {[(f['ip'], f['function']) for f in frames]}"]


# Walked without CFI (without_cfi.py): where no symbol names a function (a stripped
# program; libstdc++'s and libgcc_s's static functions, with .dynsym only) there is
# nothing to analyse, and the frame pointer or the scan guesses.
STRIPPED = "the program has no symbols"
WITHOUT_CFI_ENDS_EARLY = {
    "crash-cxx-uncaught": "past libstdc++'s static functions the frame pointer skips three frames",
    "stripped": STRIPPED}
WITHOUT_CFI_SCAN_GUESSES = {
    "cxx-throw": "libgcc_s's static function below _Unwind_RaiseException: a stale return address",
    "stripped": STRIPPED}


def walked_without_cfi(stackwalk, cores):
    """The cores walked with copies of their files whose CFI is zeroed."""
    with tempfile.TemporaryDirectory() as root:
        return without_cfi.failures(stackwalk, cores, root, WITHOUT_CFI_ENDS_EARLY, WITHOUT_CFI_SCAN_GUESSES)[0]


def checks_of(platform):
    """What is checked once every core is made: pthread_kill's tail call, the walks without
    the libraries' files (handler-park's through its signal frame) and without CFI, and the
    cores as minidumps with .sym files."""
    def checks(stackwalk, cores):
        return cross_arch.pthread_kill_and_without_libraries(stackwalk, cores) + \
            handler_crossed_without_libraries(stackwalk, cores) + walked_without_cfi(stackwalk, cores) + \
            cross_arch_minidumps.breakpad_minidumps(platform, stackwalk, cores)
    return checks


def core_pattern_is_a_file():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        return False
    return not pattern.startswith("|") and "/" not in pattern


if __name__ == "__main__":
    stackwalk = os.path.abspath(sys.argv[1])
    if dumps.kernel_runs_i386():
        if not core_pattern_is_a_file():
            print("SKIP: the kernel's core_pattern does not write a core beside the program")
            sys.exit(77)
        sys.exit(cross_arch.run(I386, stackwalk, capture, PROGRAMS, last=checks_of(I386)))
    print("this kernel does not run i386 programs (no IA32 emulation): they run under qemu-i386")
    sys.exit(cross_arch.run(I386_QEMU, stackwalk, cross_arch.qemu_capture(I386_QEMU), PROGRAMS,
                             last=checks_of(I386_QEMU)))
