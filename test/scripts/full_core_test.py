#!/usr/bin/env python3
"""Full cores walked with no module file at all, as gdb walks them with every file.

Usage: full_core_test.py STACKWALK

Each parking test program of test/dumps/programs is built and run until READY; its
/proc/PID/coredump_filter is set to dump every mapping (0x7f: file-backed ones too, as
createdump --full writes them), and gdb's gcore, which honours it, writes a full core. stackwalk
walks that core with an empty sysroot and --no-host-files: every ELF module (the program, libc,
the dynamic loader) rebuilt from the dump's memory, unwound by its own .eh_frame and named by its
dynamic symbols. Each thread's physical frames must be gdb's on the core with every file at hand,
and every module with a build-id must be rebuilt. Skips when gdb or gcc is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import cross_arch
import dumps

EVERY_MAPPING = "0x7f"  # private and shared, anonymous and file-backed, ELF headers, huge pages


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
    failures, frames = [], 0
    programs = [p for p in cross_arch.PROGRAMS if p[3] == "park"]
    with tempfile.TemporaryDirectory(prefix="stackwalk-full-") as tmp:
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        for name, source, flags, _ in programs:
            exe = cross_arch.build(cross_arch.NATIVE, name, source, flags, tmp)
            core = full_core(exe)
            out = subprocess.run([stackwalk, core, "-a", "--json", "--sysroot", empty, "--no-host-files"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                failures.append(f"{name}: stackwalk exit {out.returncode}: {out.stderr}")
                continue
            report = json.loads(out.stdout)
            gdb = cross_arch.gdb_frames(cross_arch.NATIVE, core, exe, tmp)
            # The program's own functions are in its symbol table, which no process maps.
            found, compared = cross_arch.compare_with_gdb(name, report, gdb, names=False)
            not_rebuilt = [m["name"] for m in report["modules"]
                           if m["build_id"] and not (m["note"] or "").startswith("rebuilt from the dump")
                           and m["name"] != "linux-vdso.so.1"]
            if not_rebuilt:
                found.append(f"{name}: modules not rebuilt from the dump's memory: {not_rebuilt}")
            failures += found
            frames += compared
            print(f"{'ok  ' if not found else 'FAIL'} {name}: {len(report['threads'])} threads, {compared} frames")
    return dumps.failures_summary(
        failures, f"{len(programs)} programs' full cores walked without module files, {frames} frames compared with gdb")


if __name__ == "__main__":
    sys.exit(main())
