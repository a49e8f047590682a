#!/usr/bin/env python3
"""A thread caught at its first instruction: gdb learns where the program's clone3 (or clone)
system call returns to, then runs it again with a breakpoint there, which the new thread meets as
its first instruction (and the parent on its return), and writes a core. glibc ends clone's CFI
before the syscall, so nothing describes that instruction. (gdb's scheduler locking does not hold
a new thread: gdb resumes it, and it ran on in about half the cores taken so.)

Usage: thread_birth_test.py STACKWALK

The new thread: one frame, at the instruction after the syscall (gdb's first frame), and the walk
says it ended at the end of the stack, as nothing called it (gdb adds a frame at 0 above it). The
parent, at the same instruction with the new thread's id in rax: every frame gdb has, by code
analysis of clone3 and then its callers' CFI. Skips without gdb or gcc.
"""
import json
import os
import shutil
import subprocess
import tempfile

import dumps

PROGRAM = r"""
#include <pthread.h>
#include <unistd.h>
static void *worker(void *arg) { pause(); return arg; }
int main(void) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0); return 0; }
"""


def core_at_thread_birth(tmp):
    """The program's core, written by gdb at the instruction after the clone that made its second
    thread: the first of that thread. gdb disables ASLR, so the address holds from run to run."""
    source, exe, core = (os.path.join(tmp, name) for name in ("birth.c", "birth", "birth.core"))
    with open(source, "w") as f:
        f.write(PROGRAM)
    subprocess.run(["gcc", "-O2", "-g", "-pthread", source, "-o", exe], check=True)
    commands = ["catch syscall clone clone3", "run", "set $birth = $pc", "kill", "delete", "break main", "run",
                "break *$birth", "continue", f"gcore {core}", "kill"]
    subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off"] +
                   [word for command in commands for word in ("-ex", command)] + [exe], capture_output=True, timeout=120)
    if not os.path.exists(core):
        raise RuntimeError("gdb wrote no core at the clone's return")
    return exe, core


def main(stackwalk, options):
    missing = [tool for tool in ("gdb", "gcc") if not shutil.which(tool)]
    if missing:
        dumps.skip(f"not installed: {' '.join(missing)}")
    check = dumps.Checks()
    with tempfile.TemporaryDirectory() as tmp:
        exe, core = core_at_thread_birth(tmp)
        oracle = os.path.join(tmp, "gdb.json")
        subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set pagination off",
                        "-ex", "set backtrace past-main on", "-ex", "set backtrace past-entry on", "-ex",
                        f"py ORACLE_OUT='{oracle}'", "-x", dumps.GDB_FRAMES, exe, core], capture_output=True, timeout=120)
        with open(oracle) as f:
            truth = {t["tid"]: [int(frame["pc"], 16) for frame in t["frames"]] for t in json.load(f)["threads"]}
        report = json.loads(subprocess.run([stackwalk, core, "-a", "--json"], capture_output=True, text=True,
                                           check=True).stdout)
        pid = report["dump"]["pid"]
        for thread in report["threads"]:
            ips = [int(frame["ip"], 16) for frame in thread["frames"]]
            gdb = truth[thread["tid"]]
            if thread["tid"] == pid:
                check(ips == gdb, f"the parent, at the clone's return: gdb's {len(gdb)} frames "
                                  f"(ours {[hex(ip) for ip in ips]}, gdb's {[hex(ip) for ip in gdb]})")
            else:
                function = thread["frames"][0]["function"] or ""
                check(ips == gdb[:1] and "clone" in function and thread["stop_reason"] == "end_of_stack",
                      f"the new thread: one frame, at {function} (gdb's first), then the end of the stack "
                      f"({[hex(ip) for ip in ips]}, {thread['stop_reason']}: {thread.get('stop_detail')})")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
