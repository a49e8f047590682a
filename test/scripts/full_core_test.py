#!/usr/bin/env python3
"""Full cores walked with no module file at all, as gdb walks them with every file.

Usage: full_core_test.py STACKWALK

Each parking test program of test/dumps/programs is built and run until READY; its
/proc/PID/coredump_filter is set to dump every mapping (0x7f: file-backed ones too, as
createdump --full writes them), and gdb's gcore, which honours it, writes a full core. stackwalk
walks that core with an empty sysroot and --no-host-files: every ELF module (the program, libc,
the dynamic loader) rebuilt from the dump's memory, unwound by its own .eh_frame and named by its
dynamic symbols. Each thread's physical frames must be gdb's on the core with every file at hand,
and every module with a build-id must be rebuilt. The same for the programs built for i386 (ELF32
images), where the i386 toolchain and libc are installed and the kernel runs 32-bit programs.
Skips when gdb or gcc is not installed.
"""
import os
import shutil
import subprocess
import sys

import cross_arch
import dumps
import i386_test

EVERY_MAPPING = "0x7f"  # private and shared, anonymous and file-backed, ELF headers, huge pages
# A static executable has no PT_DYNAMIC; with --eh-frame-hdr its program headers
# still locate its .eh_frame, and it is rebuilt for that. Without (GCC's default for
# -static) nothing loaded says where its .eh_frame is: it is found by a search of the
# read-only segments.
STATIC_PROGRAMS = [("threads-static", "threads.c", "-O2 -g -static -Wl,--eh-frame-hdr", "park"),
                   ("threads-static-plain", "threads.c", "-O2 -g -static", "park")]


def full_core(exe):
    """A core of the parked program with every mapping in it."""
    process = dumps.start_parked(exe)
    try:
        with open(f"/proc/{process.pid}/coredump_filter", "w") as f:
            f.write(EVERY_MAPPING)
        prefix = exe + "-full"
        subprocess.run(["gcore", "-o", prefix, str(process.pid)], capture_output=True, check=True, timeout=60)
        return f"{prefix}.{process.pid}"
    finally:
        process.kill()
        process.wait()


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    missing = [t for t in ("gdb", "gcore", "gcc", "g++") if not shutil.which(t)]
    if missing:
        print(f"SKIP: not installed: {' '.join(missing)}")
        return 77

    def rebuilt(name, report):
        not_rebuilt = [m["name"] for m in report["modules"]
                       if m["build_id"] and not (m["note"] or "").startswith("rebuilt from the dump")
                       and m["name"] != "linux-vdso.so.1"]
        return [f"{name}: modules not rebuilt from the dump's memory: {not_rebuilt}"] if not_rebuilt else []

    def without_files(tmp):
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        return ["--sysroot", empty, "--no-host-files"]
    # The program's own functions are in its symbol table, which no process maps: names are not compared.
    def walk(platform, extra_programs=()):
        return cross_arch.parked_programs_against_gdb(stackwalk, lambda exe: (full_core(exe),) * 2, without_files,
                                                      rebuilt, f"{platform.name} programs' full cores walked without "
                                                      "module files", names=False, platform=platform,
                                                      extra_programs=extra_programs)
    status = walk(cross_arch.NATIVE, STATIC_PROGRAMS)
    missing = i386_test.I386.missing()
    if missing or not dumps.kernel_runs_i386():
        print(f"note: i386 full cores not walked: {'not installed: ' + ' '.join(missing) if missing else 'this kernel does not run i386 programs'}")
        return status
    return max(status, walk(i386_test.I386))


if __name__ == "__main__":
    sys.exit(main())
