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


# Frames past the first of the program's frames that winedbg lists which are not
# winedbg's: return addresses of calls that have returned, which the scan takes
# where nothing can unwind a frame, each to go when something can.
KNOWN_STALE_IN_PROGRAM = {
    # fp_frame moved its stack pointer (alloca) and its frame register, rbp, is
    # lost (fp_inner below it keeps none, and the scan below that carries none):
    # the scan takes fp_frame's return from ___chkstk_ms, which alloca called,
    # left in the alloca'd block.
    ("unwind-codes", 0x140001823),
}


def without_system_dlls(stackwalk, root, dump, oracle):
    """The dump walked with the program's image and PDB but none of Wine's DLLs,
    as a pipeline without Microsoft's symbol server walks it: the scan leaves the
    system's frames, and a walk that ends as complete (end_of_stack, null_ip)
    must have reached every frame in the program that winedbg lists, and past the
    first of those, every frame must be winedbg's but KNOWN_STALE_IN_PROGRAM. Returns
    (winedbg's program frames, those found, frames not winedbg's, failures)."""
    args = [dump["dump"], "--module-path", "bin", "--module-path", "symbols", "--no-host-files", "-a", "--json"]
    report = json.loads(dumps.run_stackwalk(stackwalk, root, args).stdout)
    program = next(m for m in report["modules"] if m["name"].lower() == os.path.basename(dump["executable"]).lower())
    start, size = int(program["base"], 16), int(program["size"], 16)
    wanted = found = false = 0
    failures = []
    for truth in oracle["threads"]:
        ours = next((t for t in report["threads"] if t["tid"] == truth["tid"]), None)
        if not ours:
            continue
        ips = [int(f["ip"], 16) for f in ours["frames"] if not f["inlined"]]
        pcs = [int(f["pc"], 16) for f in truth["frames"]]
        in_program = [pc for pc in pcs if start <= pc < start + size]
        missing = [hex(pc) for pc in in_program if pc not in ips]
        wanted += len(in_program)
        found += len(in_program) - len(missing)
        false += sum(ip not in pcs for ip in ips)
        if missing and ours["stop_reason"] in ("end_of_stack", "null_ip"):
            failures.append(f"thread {truth['tid']} ends ({ours['stop_reason']}) short of {missing}")
        first = next((i for i, ip in enumerate(ips) if ip in in_program), len(ips))
        past = [hex(ip) for ip in ips[first:] if ip not in pcs and (dump["name"], ip) not in KNOWN_STALE_IN_PROGRAM]
        if past:
            failures.append(f"thread {truth['tid']}: past its first frame in the program, frames not winedbg's: {past}")
    return wanted, found, false, failures


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
            wanted, found, false, ended = without_system_dlls(stackwalk, root, dump, oracle)
            print(f"{'ok  ' if not ended else 'FAIL'} {name} without Wine's DLLs: {found} of winedbg's {wanted} "
                  f"frames in the program found ({false} frames not winedbg's, none past the first of them but "
                  f"the listed stale ones); no walk ends as complete short of them"
                  + (f" (not: {ended})" if ended else ""))
            failures += bool(ended)
    print(f"{failures} comparison(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
