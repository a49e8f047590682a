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
import os
import shutil
import subprocess
import sys

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

    def no_crash(name, report):
        return [] if report["crash"] is None else [f"{name}: lldb's attach reported as a crash: {report['crash']}"]
    return cross_arch.parked_programs_against_gdb(stackwalk, capture, lambda tmp: ["--module-path", tmp], no_crash,
                                                  "programs' lldb minidumps")


if __name__ == "__main__":
    sys.exit(main())
