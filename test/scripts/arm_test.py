#!/usr/bin/env python3
"""32-bit ARM (armhf) Linux cores walked as eu-stack and gdb-multiarch walk them (issue 23).

Usage: arm_test.py STACKWALK

The test programs (cross_arch.py) are built for armhf (Thumb-2 code, Debian's
cross compilers) and run under qemu-arm, which writes the guest's ELF core: no
NT_FILE note and no ELF header page, so stackwalk places the executable by its
entry point (-e) and finds the libraries through the link map; the libraries'
CFI is in their debug files' compressed .debug_frame. Frames are compared with
eu-stack and gdb-multiarch, as cross_arch.py says. eu-stack stops at glibc's
signal restorer: sigcontext's thread in a handler is compared up to it, and past
it with the program's own record.

Skipped (77) without the cross compilers, qemu-arm, eu-stack, gdb-multiarch or the armhf libc.
"""
import os
import sys

import cross_arch

ARM = cross_arch.Platform(name="arm", triplet="arm-linux-gnueabihf", libc="/lib/arm-linux-gnueabihf/libc.so.6",
                          gdb="gdb-multiarch", runner=["qemu-arm"], place_executable=True,
                          tools_stop_at_trampoline=True)


def capture(exe, mode, workdir):
    """Runs the program under qemu until it dies with a core; returns the core and its output."""
    # A directory named "core" keeps the host kernel from dumping qemu itself.
    os.makedirs(os.path.join(workdir, "core"), exist_ok=True)
    output, status = cross_arch.run_until_core(ARM, exe, mode, workdir,
                                               env=dict(os.environ, QEMU_STACK_SIZE="524288"))
    cores = [f for f in os.listdir(workdir) if f.startswith("qemu_") and f.endswith(".core")]
    if len(cores) != 1:
        raise SystemExit(f"{exe}: qemu wrote {len(cores)} cores (exit {status})")
    moved = os.path.join(os.path.dirname(workdir), os.path.basename(exe) + ".core")
    os.rename(os.path.join(workdir, cores[0]), moved)
    return moved, output


if __name__ == "__main__":
    sys.exit(cross_arch.run(ARM, os.path.abspath(sys.argv[1]), capture))
