#!/usr/bin/env python3
"""Minidumps written by lldb, walked frame for frame as gdb walks a core of the same process.

Usage: lldb_minidump_test.py STACKWALK

Each parking test program of test/dumps/programs is built and run until READY; while its
threads sleep, gdb's gcore writes a core of it and lldb-19 attaches and writes a minidump
(`process save-core --plugin-name=minidump`), then the program is killed. lldb's minidumps
hold 720-byte contexts, record each ELF module's size as its first segment only (the code
lies past it: the maps stream has the real extent) and stop every thread with the attach's
SIGSTOP, which is no crash. stackwalk walks the minidump with the programs' directory as its
module path (the libraries are this machine's, which the dump's build-ids check); each
thread's physical frames must be gdb's on the core (tail-call frames aside: gdb's
TAILCALL_FRAMEs are not in its list), and the program's own frames must have gdb's names.
Skips when lldb-19, gdb or gcc is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import cross_arch
import dumps

LLDB = "lldb-19"
def capture(exe):
    """(core, minidump) of the parked program: gdb's gcore, then lldb's minidump."""
    process = dumps.start_parked(exe)
    try:
        prefix = exe + "-gcore"
        subprocess.run(["gcore", "-o", prefix, str(process.pid)], capture_output=True, check=True, timeout=60)
        minidump = exe + "-lldb.dmp"
        subprocess.run([LLDB, "-b", "-p", str(process.pid), "-o",
                        f"process save-core --plugin-name=minidump {minidump}", "-o", "process detach"],
                       capture_output=True, check=True, timeout=120)
        return f"{prefix}.{process.pid}", minidump
    finally:
        process.kill()
        process.wait()


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    missing = [t for t in (LLDB, "gdb", "gcore", "gcc", "g++") if not shutil.which(t)]
    if missing:
        print(f"SKIP: not installed: {' '.join(missing)}")
        return 77
    failures, frames = [], 0
    programs = [p for p in cross_arch.PROGRAMS if p[3] == "park"]
    with tempfile.TemporaryDirectory(prefix="stackwalk-lldb-") as tmp:
        for name, source, flags, _ in programs:
            exe = cross_arch.build(cross_arch.NATIVE, name, source, flags, tmp)
            core, minidump = capture(exe)
            out = subprocess.run([stackwalk, minidump, "-a", "--json", "--module-path", tmp],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                failures.append(f"{name}: stackwalk exit {out.returncode}: {out.stderr}")
                continue
            report = json.loads(out.stdout)
            found, compared = cross_arch.compare_with_gdb(name, report, cross_arch.gdb_frames(cross_arch.NATIVE, core, exe, tmp))
            if report["crash"] is not None:
                found.append(f"{name}: lldb's attach reported as a crash: {report['crash']}")
            failures += found
            frames += compared
            print(f"{'ok  ' if not found else 'FAIL'} {name}: {len(report['threads'])} threads, {compared} frames")
    return dumps.failures_summary(
        failures, f"{len(programs)} programs' lldb minidumps, {frames} frames compared with gdb on their cores")


if __name__ == "__main__":
    sys.exit(main())
