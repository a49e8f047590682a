#!/usr/bin/env python3
"""Tail-call frames that cross modules, as gdb shows them.

Usage: tail_call_test.py STACKWALK

test/dumps/programs/tail-call-plt.c is built (-O2 -g) and dies of the SIGSEGV it raises:
main calls relay, which jumps to fill, which jumps to libc's raise through the PLT. Neither
jump leaves a frame; gdb shows relay and fill as tail-call frames from the DWARF call-site
records, the chain starting in the program and ending in libc. The crashed thread's frames
(inline frames aside), with each one's pc, name and whether it is a tail call, must be gdb's.
Skips when gdb or gcc is not installed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import cross_arch
import dumps

GDB_FRAMES = """
frame, out = gdb.newest_frame(), []
while frame is not None and len(out) < 256:
    if frame.type() != gdb.INLINE_FRAME:
        out.append("%x:%s:%d" % (frame.pc(), frame.name(), frame.type() == gdb.TAILCALL_FRAME))
    frame = frame.older()
print("FRAMES", " ".join(out))
"""


def gdb_frames(core, exe, tmp):
    script = os.path.join(tmp, "frames.py")
    with open(script, "w") as f:
        f.write(GDB_FRAMES)
    out = subprocess.run(cross_arch.gdb_command(cross_arch.NATIVE, core, exe) + ["-x", script], capture_output=True,
                         text=True, timeout=120).stdout
    line = next((l for l in out.splitlines() if l.startswith("FRAMES")), "FRAMES")
    return [(int(pc, 16), name, tail == "1") for pc, name, tail in (w.rsplit(":", 2) for w in line.split()[1:])]


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    missing = [t for t in ("gdb", "gcc") if not shutil.which(t)]
    if missing:
        print(f"SKIP: not installed: {' '.join(missing)}")
        return 77
    failures = []
    with tempfile.TemporaryDirectory(prefix="stackwalk-tailcall-") as tmp:
        exe = cross_arch.build(cross_arch.NATIVE, "tail-call-plt", "tail-call-plt.c", "-O2 -g", tmp)
        workdir = os.path.join(tmp, "run")
        os.makedirs(workdir)
        core, _ = cross_arch.capture_core(cross_arch.NATIVE, exe, "crash", workdir,
                                          lambda f: f == "core" or f.startswith("core."))
        report = cross_arch.stackwalk_report(stackwalk, core, exe)
        crashed = next(t for t in report["threads"] if t["crashed"])
        ours = [(int(f["ip"], 16), cross_arch.without_parameters(f["function"]), f["tail_call"])
                for f in crashed["frames"] if not f["inlined"]]
        theirs = gdb_frames(core, exe, tmp)
        tail_calls = [name for _, name, tail in theirs if tail]
        if ours != theirs:
            failures.append(f"frames {[(hex(a), n, t) for a, n, t in ours]} vs gdb's "
                            f"{[(hex(a), n, t) for a, n, t in theirs]}")
        if not {"relay", "fill"} <= set(tail_calls):
            failures.append(f"gdb's tail-call frames are {tail_calls}, not relay and fill: the test proves nothing")
        print(f"{'ok  ' if not failures else 'FAIL'} tail-call-plt: {len(theirs)} frames as gdb's, "
              f"tail calls {tail_calls}")
    return dumps.failures_summary(failures, "tail calls across modules compared with gdb")


if __name__ == "__main__":
    sys.exit(main())
