#!/usr/bin/env python3
"""A thread stopped in a PLT stub: gdb runs a program to the stub of strlen (`break strlen@plt`)
and writes a core; stackwalk must name the first frame as gdb does (`strlen@plt`, where LLVM's
symbolizer would say `_init+0x30`: .init's _init has size 0 and ends before .plt) and give gdb's
frames. Built twice: with GNU ld's lazy stubs in .plt, and with IBT stubs in .plt.sec (`-z ibtplt`,
endbr64 before each jump).

Usage: plt_stub_test.py STACKWALK

Skips without gdb or gcc, or without the gdb oracle (../shared/oracle).
"""
import json
import os
import shutil
import subprocess
import tempfile

import dumps

PROGRAM = r"""
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) int measure(const char *s) { return (int)strlen(s) + atoi(s); }
int main(int argc, char **argv) { return measure(argv[0]) > 1000; }
"""


def core_in_stub(tmp, name, flags):
    """The program built with FLAGS, and its core written by gdb in strlen's PLT stub."""
    source, exe, core = (os.path.join(tmp, f"{name}{suffix}") for suffix in (".c", "", ".core"))
    with open(source, "w") as f:
        f.write(PROGRAM)
    subprocess.run(["gcc", "-O1", "-g", source, "-o", exe] + flags, check=True)
    commands = ["break strlen@plt", "run", f"gcore {core}", "kill"]
    subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off"] +
                   [word for command in commands for word in ("-ex", command)] + [exe], capture_output=True, timeout=120)
    if not os.path.exists(core):
        raise RuntimeError(f"gdb wrote no core in {name}'s strlen@plt")
    return exe, core


def gdb_frames(exe, core, tmp):
    oracle = os.path.join(tmp, "gdb.json")
    subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set pagination off", "-ex",
                    f"py ORACLE_OUT='{oracle}'", "-x", dumps.GDB_FRAMES, exe, core], capture_output=True, timeout=120)
    with open(oracle) as f:
        return json.load(f)["threads"][0]["frames"]


def main(stackwalk, options):
    missing = [tool for tool in ("gdb", "gcc") if not shutil.which(tool)]
    if missing:
        dumps.skip(f"not installed: {' '.join(missing)}")
    if not os.path.exists(dumps.GDB_FRAMES):
        dumps.skip(f"{dumps.GDB_FRAMES} is absent")
    check = dumps.Checks()
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags, section in (("lazy", [], ".plt"),
                                     ("ibt", ["-fcf-protection=full", "-Wl,-z,ibtplt"], ".plt.sec")):
            exe, core = core_in_stub(tmp, name, flags)
            gdb = gdb_frames(exe, core, tmp)
            report = json.loads(subprocess.run([stackwalk, core, "--json"], capture_output=True, text=True,
                                               check=True).stdout)
            frames = report["threads"][0]["frames"]
            ours = [(int(f["ip"], 16), f["function"]) for f in frames if not f["inlined"]]
            theirs = [(int(f["pc"], 16), f["function"]) for f in gdb]
            check(ours[0] == theirs[0] and ours[0][1] == "strlen@plt",
                  f"{name} ({section}): the first frame is gdb's, {theirs[0][1]} (ours: {ours[0][1]})")
            check([ip for ip, _ in ours[:len(theirs)]] == [ip for ip, _ in theirs] and len(theirs) >= 3,
                  f"{name}: gdb's frames, to main ({[hex(ip) for ip, _ in ours]}, gdb's {[hex(ip) for ip, _ in theirs]})")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
