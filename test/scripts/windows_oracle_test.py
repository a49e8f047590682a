#!/usr/bin/env python3
"""Every thread of every Windows dump in test/dumps/windows against winedbg's
backtrace of the same live process, through ../shared/oracle/compare.py --names.

Usage: windows_oracle_test.py STACKWALK UNPACKED_DUMPS_DIR

winedbg prints an inlined call before the function it sits in, at the same
pc. ../shared/oracle/wine-dump.sh marks the second frame of any pair with
equal pcs as inlined: that is the containing (physical) function, and in a
recursion every repeated frame. Here a frame is marked inlined when the next
frame has its pc and another function's name (the function it was inlined
into); equal names at one pc are a recursion, whose frames are all physical.
This is how gdb and compare.py mean "inlined".
"""
import json
import os
import tempfile

import dumps

SUBDIR = "windows"


def mark_inline_frames(oracle):
    for thread in oracle["threads"]:
        frames = thread["frames"]
        for i, frame in enumerate(frames):
            following = frames[i + 1] if i + 1 < len(frames) else None
            frame["inlined"] = bool(following and following["pc"] == frame["pc"]
                                    and following["function"] != frame["function"])
    return oracle


def frames_without_source(ours_path, oracle, executable):
    """The program's physical frames, at pcs winedbg names, that lack a name or file:line."""
    with open(ours_path) as f:
        ours = json.load(f)
    named = {int(fr["pc"], 16) for t in oracle["threads"] for fr in t["frames"] if fr["function"]}
    return [f"{fr['ip']} {fr['function']}" for t in ours["threads"] for fr in t["frames"]
            if fr["module"] and fr["module"].lower() == executable.lower() and not fr["inlined"]
            and int(fr["ip"], 16) in named and not (fr["function"] and fr["file"] and fr["line"])]


def main(stackwalk, unpacked, options):
    if not os.path.exists(dumps.COMPARE):
        dumps.skip(f"{dumps.COMPARE} is absent (../shared is not beside the project)")
    root = os.path.join(unpacked, SUBDIR)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for dump in dumps.manifest(SUBDIR):
            name = dump["name"]
            args = dumps.windows_args(dump) + ["-a", "--json"]
            ours = os.path.join(tmp, name + ".json")
            with open(ours, "w") as f:
                f.write(dumps.run_stackwalk(stackwalk, root, args).stdout)
            with open(os.path.join(dumps.SOURCE, SUBDIR, dump["oracle"])) as f:
                oracle = mark_inline_frames(json.load(f))
            oracle_path = os.path.join(tmp, name + ".oracle.json")
            with open(oracle_path, "w") as f:
                json.dump(oracle, f)
            ok, summary = dumps.compare(ours, oracle_path, "--verbose")
            print(f"{'ok  ' if ok else 'FAIL'} {name} vs winedbg: {summary.splitlines()[-1]}")
            if not ok:
                failures += 1
                print("     " + summary.replace("\n", "\n     "))
            unsourced = frames_without_source(ours, oracle, os.path.basename(dump["executable"]))
            print(f"{'ok  ' if not unsourced else 'FAIL'} {name}: the program's frames that winedbg names carry a "
                  f"function and file:line" + (f" (not: {unsourced})" if unsourced else ""))
            failures += bool(unsourced)
    print(f"{failures} comparison(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
