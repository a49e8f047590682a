#!/usr/bin/env python3
"""i386 Linux cores walked as eu-stack and gdb walk them (issue 23).

Usage: i386_test.py STACKWALK

The test programs (cross_arch.py) are built for i386 (Debian's i686 cross
compilers) and run natively: the kernel writes their cores (core_pattern `core`),
with NT_FILE and the modules' ELF headers, as for 64-bit programs. Frames are
compared with eu-stack and gdb (Debian's reads i386 cores, with the i386 libc's
debug files from libc6-dbg:i386), as cross_arch.py says; sigcontext's thread in a
handler is also checked against the program's own record past glibc's trampoline.
gdb names the wrong pthread_kill in sigcontext (below): there the truth is checked.

Skipped (77) without the i686 cross compilers, eu-stack, gdb or the i386 libc, or
when the kernel's core_pattern is not a plain file name.
"""
import json
import os
import subprocess
import sys

import cross_arch

# i386's libc has two pthread_kill symbols: pthread_kill@@GLIBC_2.34 (__pthread_kill,
# whose __pthread_kill_internal tail-calls __pthread_kill_implementation with no_tid 0)
# and the compat pthread_kill@GLIBC_2.0 (__pthread_kill_esrch, no_tid 1). The program
# links the first; gdb resolves send_to_self's call through the PLT by name to the
# second, and shows its tail-call frame and an entry value of no_tid (3) from it.
PTHREAD_KILL = ("gdb resolves the call of pthread_kill@plt to the compat pthread_kill@GLIBC_2.0 "
                "(__pthread_kill_esrch), not the pthread_kill@@GLIBC_2.34 the program links")
I386 = cross_arch.Platform(name="i386", triplet="i686-linux-gnu", libc="/lib/i386-linux-gnu/libc.so.6", gdb="gdb",
                           runner=[], gdb_args_wrong={"sigcontext": PTHREAD_KILL})


def pthread_kill_truth(stackwalk, cores):
    """sigcontext's signal thread, past the signal frame: the tail call through
    __pthread_kill_internal, and __pthread_kill_implementation's no_tid 0."""
    core, exe = cores["sigcontext"]
    out = subprocess.run([stackwalk, core, "-e", exe, "-a", "--json", "--args"], capture_output=True, text=True)
    frames = [f for t in json.loads(out.stdout)["threads"] for f in t["frames"]]
    tail = [f["function"] for f in frames if f["tail_call"]]
    no_tid = [a["value"] for f in frames if f["function"] == "__pthread_kill_implementation"
              for a in f.get("arguments", []) if a["name"] == "no_tid"]
    ok = tail == ["__pthread_kill_internal"] and no_tid == ["0"]
    print(f"{'ok  ' if ok else 'FAIL'} sigcontext: pthread_kill's tail call {tail}, no_tid {no_tid}")
    return [] if ok else [f"sigcontext: tail calls {tail}, no_tid {no_tid}; expected __pthread_kill_internal, 0"]


def capture(exe, mode, workdir):
    """Runs the program until the kernel writes its core into `workdir`."""
    output, status = cross_arch.run_until_core(I386, exe, mode, workdir)
    cores = [f for f in os.listdir(workdir) if f == "core" or f.startswith("core.")]
    if len(cores) != 1:
        raise SystemExit(f"{exe}: the kernel wrote {len(cores)} cores (exit {status})")
    moved = os.path.join(os.path.dirname(workdir), os.path.basename(exe) + ".core")
    os.rename(os.path.join(workdir, cores[0]), moved)
    return moved, output


def core_pattern_is_a_file():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        return False
    return not pattern.startswith("|") and "/" not in pattern


if __name__ == "__main__":
    if not core_pattern_is_a_file():
        print("SKIP: the kernel's core_pattern does not write a core beside the program")
        sys.exit(77)
    sys.exit(cross_arch.run(I386, os.path.abspath(sys.argv[1]), capture, last=pthread_kill_truth))
