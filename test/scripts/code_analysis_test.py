#!/usr/bin/env python3
"""The project's x86-64 cores walked with files whose unwind tables are gone (code analysis).

Usage: code_analysis_test.py STACKWALK UNPACKED_DUMPS_DIR

The sysroot, the programs and their debug files are copied, and in every ELF file
of the copies the bytes of .eh_frame, .eh_frame_hdr and .debug_frame are zeroed:
the same files (build-ids, symbols, code) with no CFI, as musl's libc and programs
built with -fno-asynchronous-unwind-tables come. Each core is walked with the copies
alone (--no-host-files) and with the real files, whose walk is gdb's (oracle_gdb).
Frames are then found by analysing each function's instructions from its symbol's
start (CodeAnalysisUnwinder), the fallbacks after it. Checked:

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
import json
import os
import shutil
import struct
import subprocess
import tempfile

import cross_arch
import dumps

CFI_SECTIONS = {b".eh_frame", b".eh_frame_hdr", b".debug_frame"}
SHT_NOBITS = 8

# Threads whose walk without CFI ends before the walk with it, and why.
ENDS_EARLY = {
    "cxx-throw": "a frame in libgcc_s.so.1, whose function no symbol names (.dynsym only): no analysis, "
                 "and the scan finds no return address within its window",
}


def zero_cfi(path):
    """Zeroes the CFI sections' bytes of a 64-bit little-endian ELF file in place; how many."""
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            return 0
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
        headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names_at = headers[shstrndx][4]
        zeroed = 0
        for name, kind, _, _, offset, size in headers:
            section = bytes(data[names_at + name:data.index(0, names_at + name)])
            if section in CFI_SECTIONS and kind != SHT_NOBITS:
                data[offset:offset + size] = bytes(size)
                zeroed += 1
        f.seek(0)
        f.write(data)
    return zeroed


def copy_without_cfi(unpacked, into):
    zeroed = 0
    for part in ("sysroot", "bin", "debug"):
        shutil.copytree(os.path.join(unpacked, part), os.path.join(into, part), symlinks=True)
        for root, _, files in os.walk(os.path.join(into, part)):
            for name in files:
                path = os.path.join(root, name)
                if not os.path.islink(path):
                    zeroed += zero_cfi(path)
    return zeroed


def walk(stackwalk, core, exe, tree, *extra):
    out = subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", "--sysroot", f"{tree}/sysroot",
                          "--module-path", f"{tree}/bin", "--module-path", f"{tree}/debug", *extra],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {core}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["threads"]


def main(stackwalk, unpacked, options):
    cores = {d["name"]: (os.path.join(unpacked, d["core"]), os.path.join(unpacked, d["executable"]))
             for d in dumps.manifest() if d.get("executable")}
    check = dumps.Checks()
    with tempfile.TemporaryDirectory() as tree:
        zeroed = copy_without_cfi(unpacked, tree)
        check(zeroed >= 40, f"{zeroed} CFI sections zeroed in the copies")
        invented, short, frames, analysed = [], [], 0, 0  # short: cores with a thread that ends early
        for name, (core, exe) in sorted(cores.items()):
            with_cfi = walk(stackwalk, core, exe, unpacked)
            without = walk(stackwalk, core, os.path.join(tree, os.path.relpath(exe, unpacked)), tree, "--no-host-files")
            for ours, truth in zip(without, with_cfi):
                got = [f["ip"] for f in cross_arch.physical(ours)]
                want = [f["ip"] for f in cross_arch.physical(truth)]
                remaining = iter(want)
                if not all(ip in remaining for ip in got):
                    invented.append(f"{name} thread {ours['tid']}: {got} not in order among {want}")
                elif got != want:
                    short.append(name)
                    print(f"     {name} thread {ours['tid']}: {len(got)} of {len(want)} frames")
                frames += len(want) - 1
                analysed += sum(f["trust"] == "code_analysis" for f in cross_arch.physical(ours))
        for failure in invented:
            print("    ", failure)
        check(not invented, f"{len(cores)} cores without CFI: no frame the walk with CFI lacks")
        check(set(short) == set(ENDS_EARLY), "every thread's frames equal the walk with CFI's, but where it ends "
              "early (as listed, and no more: " + "; ".join(f"{k}: {v}" for k, v in ENDS_EARLY.items()) + ")")
        check(analysed * 10 >= frames * 7, f"{analysed} of the {frames} frames past the first found by code analysis")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
