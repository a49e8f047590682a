#!/usr/bin/env python3
"""The ELF cores of ../shared/corpus, against what their own projects expect
(../shared/corpus/README.md) and against gdb when it is installed.

Usage: corpus_test.py STACKWALK

Where stackwalk differs from gdb on purpose, the difference is spelled out in
CORES below and checked, not ignored.
"""
import bz2
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import dumps

CORPUS = os.path.join(dumps.SHARED, "corpus")


def frames_of(report, tid=None):
    threads = report["threads"]
    thread = threads[0] if tid is None else next(t for t in threads if t["tid"] == tid)
    return thread["frames"]


def physical(frames):
    return [f for f in frames if not f["inlined"] and not f.get("tail_call")]


def names(frames):
    return [f["function"] for f in frames]


def check_inlines(report):
    """run-stack-i-test.sh: five calls inlined at 0x4006c8, then main, with source lines."""
    frames = frames_of(report)[:6]
    got = [(f["ip"], f["function"], f["inlined"], os.path.basename(f["file"] or ""), f["line"]) for f in frames]
    src = "dwarfinlines.cpp"
    want = [("0x00000000004006c8", "fubar", True, src, 6), ("0x00000000004006c8", "foobar", True, src, 14),
            ("0x00000000004006c8", "bar", True, src, 21), ("0x00000000004006c8", "foo", True, src, 27),
            ("0x00000000004006c8", "fu(int)", False, src, 33), ("0x00000000004004c5", "main", False, src, 39)]
    return got == want, f"got {got}"


def check_backtrace(report):
    """run-backtrace-core-*.sh / backtrace-subr.sh: the two threads' call chains (on i386 each
    after the vDSO's __kernel_vsyscall, which backtrace.c's callback_verify allows)."""
    chains = sorted([n for i, n in enumerate(names(physical(t["frames"]))) if i or n != "__kernel_vsyscall"]
                    for t in report["threads"])
    want = sorted([["pthread_join", "main", "__libc_start_main", "_start"],
                   ["raise", "sigusr2", "stdarg", "backtracegen", "start", "start_thread", "clone"]])
    return chains == want, f"got {chains}"


def check_lldb(report):
    """TestLinuxCore.py check_stack: bar, foo, _start."""
    got = names(physical(frames_of(report)))
    return got == ["bar", "foo", "_start"], f"got {got}"


# name, compressed files, executable, stackwalk's own check, and how many of
# gdb's frames at the end of the crashing thread are deliberately not matched.
CORES = [
    ("testfiledwarfinlines.core", ["elfcore/elfutils/testfiledwarfinlines.core.bz2",
                                   "elfcore/elfutils/testfiledwarfinlines.bz2"],
     "testfiledwarfinlines", check_inlines,
     # The core lacks libc's file and its text pages. gdb's heuristic unwinder
     # ends with a frame at pc 0; stackwalk's stack scan finds the real caller,
     # _start+0x29, right after `call __libc_start_main`.
     {"gdb_tail_dropped": 1, "ours_tail": ["_start"]}),
    ("backtrace.x86_64.core", ["elfcore/elfutils/backtrace.x86_64.core.bz2",
                               "elfcore/elfutils/backtrace.x86_64.exec.bz2"],
     "backtrace.x86_64.exec", check_backtrace, {"gdb_tail_dropped": 0, "ours_tail": []}),
    ("backtrace.x86_64.fp.core", ["elfcore/elfutils-more/backtrace.x86_64.fp.core.bz2",
                                  "elfcore/elfutils-more/backtrace.x86_64.fp.exec.bz2"],
     "backtrace.x86_64.fp.exec", check_backtrace,
     # gdb loses the signal thread after stdarg (a frame at pc 0); stackwalk's frame-pointer
     # step goes on, as backtrace-subr.sh expects, to backtracegen, start, start_thread, clone.
     {"gdb_tail_dropped": 1, "ours_tail": ["backtracegen", "start", "start_thread", "clone"]}),
    ("backtrace.i386.core", ["elfcore/elfutils-more/backtrace.i386.core.bz2",
                             "elfcore/elfutils-more/backtrace.i386.exec.bz2"],
     "backtrace.i386.exec", check_backtrace, {"gdb_tail_dropped": 0, "ours_tail": []}),
    ("backtrace.i386.fp.core", ["elfcore/elfutils-more/backtrace.i386.fp.core.bz2",
                                "elfcore/elfutils-more/backtrace.i386.fp.exec.bz2"],
     "backtrace.i386.fp.exec", check_backtrace, {"gdb_tail_dropped": 0, "ours_tail": []}),
    ("backtrace.x32.core", ["elfcore/elfutils-more/backtrace.x32.core.bz2",
                            "elfcore/elfutils-more/backtrace.x32.exec.bz2"],
     "backtrace.x32.exec", check_backtrace, {"gdb_tail_dropped": 0, "ours_tail": []}),
    ("linux-x86_64.core", ["elfcore/lldb/linux-x86_64.core", "elfcore/lldb/linux-x86_64.out"],
     "linux-x86_64.out", check_lldb,
     # _start's CFI claims a return address where the kernel put argc (1):
     # gdb follows it into three frames of garbage (0x1, a stack address, 0);
     # stackwalk stops because 0x1 is not executable memory.
     {"gdb_tail_dropped": 3, "ours_tail": []}),
]


def unpack(relative, tmp):
    source = os.path.join(CORPUS, relative)
    name = os.path.basename(relative)
    opener = bz2.open if name.endswith(".bz2") else gzip.open if name.endswith(".gz") else open
    target = os.path.join(tmp, name.rsplit(".", 1)[0] if opener is not open else name)
    with opener(source, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.chmod(target, 0o755)
    return target


def gdb_frames(exe, core, out):
    subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set pagination off",
                    "-ex", "set backtrace past-main on", "-ex", "set backtrace past-entry on",
                    "-ex", f"py ORACLE_OUT='{out}'", "-x", dumps.GDB_FRAMES, exe, core],
                   capture_output=True, timeout=300)
    with open(out) as f:
        return json.load(f)


def compare_with_gdb(report, ours_path, exe, core, tmp, deliberate):
    oracle = gdb_frames(exe, core, os.path.join(tmp, "gdb.json"))
    crashed = report["crash"]["thread_id"] if report["crash"] else None
    for thread in oracle["threads"]:
        if thread["tid"] != crashed or not deliberate["gdb_tail_dropped"]:
            continue
        thread["frames"] = thread["frames"][:-deliberate["gdb_tail_dropped"]]
        ours = next(t for t in report["threads"] if t["tid"] == crashed)
        keep = len(physical(thread["frames"]))
        extra = physical(ours["frames"])[keep:]
        if names(extra) != deliberate["ours_tail"]:
            return False, f"frames past gdb's: {names(extra)}, expected {deliberate['ours_tail']}"
        ours["frames"] = [f for f in ours["frames"] if f not in extra]
    trimmed = os.path.join(tmp, "ours-trimmed.json")
    with open(trimmed, "w") as f:
        json.dump(report, f)
    with open(os.path.join(tmp, "gdb-trimmed.json"), "w") as f:
        json.dump(oracle, f)
    return dumps.compare(trimmed, os.path.join(tmp, "gdb-trimmed.json"), "--verbose")


def main(stackwalk, options):
    if not os.path.isdir(CORPUS):
        dumps.skip(f"{CORPUS} is absent")
    failures = 0
    for core_name, files, exe_name, check, deliberate in CORES:
        with tempfile.TemporaryDirectory() as tmp:
            paths = [unpack(f, tmp) for f in files]
            core = next(p for p in paths if p.endswith(core_name))
            exe = os.path.join(tmp, exe_name)
            result = subprocess.run([stackwalk, core, "-a", "--json", "-e", exe], capture_output=True, text=True,
                                    timeout=120)
            if result.returncode != 0:
                print(f"FAIL {core_name}: stackwalk exited {result.returncode}: {result.stderr}")
                failures += 1
                continue
            report = json.loads(result.stdout)
            ok, detail = check(report)
            print(f"{'ok  ' if ok else 'FAIL'} {core_name}: the peer's expectation{'' if ok else ': ' + detail}")
            failures += not ok
            if dumps.have_gdb() and os.path.exists(dumps.COMPARE):
                ours_path = os.path.join(tmp, "ours.json")
                ok, detail = compare_with_gdb(report, ours_path, exe, core, tmp, deliberate)
                print(f"{'ok  ' if ok else 'FAIL'} {core_name} vs gdb: {detail.splitlines()[-1]}")
                if not ok:
                    print("     " + detail.replace("\n", "\n     "))
                failures += not ok
            else:
                print(f"note: {core_name}: gdb or compare.py missing; gdb comparison skipped")
    print(f"{failures} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
