#!/usr/bin/env python3
"""32-bit Windows minidumps (Breakpad's x86 test dumps in ../shared/corpus), walked
by stackwalk and by Breakpad's own minidump_stackwalk (the npm package `minidump`,
fetched as breakpad_symbols_test.py fetches it): every thread's frames, by their
eip and esp, with the corpus's Breakpad symbols (STACK WIN frame data) and without
them (the ebp chain and the scan). Without Breakpad's tool, minidump2.dmp is
checked against the output Breakpad's tests keep beside it, and rust-minidump's
snapshot of the same dump without symbols.

Usage: windows_x86_test.py STACKWALK
"""
import json
import os
import re
import subprocess

import breakpad_symbols_test
import dumps

CORPUS = os.path.join(dumps.SHARED, "corpus", "minidump")
BREAKPAD = os.path.join(CORPUS, "breakpad")
SYMBOLS = os.path.join(BREAKPAD, "symbols")


def ours(stackwalk, dump, symbols):
    args = [stackwalk, dump, "-a", "--json", "--registers"] + (["--symbols-path", SYMBOLS] if symbols else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {dump}: exit {out.returncode}: {out.stderr}")
    report = json.loads(out.stdout)
    walks = {}
    for thread in report["threads"]:
        frames = [f for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]
        walks[len(walks)] = [
            (int(f["ip"], 16), int(f["sp"], 16), f.get("function")) for f in frames]
    return report, walks


def parse_breakpad(text):
    """{thread index: [(eip, esp, function)]} from minidump_stackwalk's human output."""
    walks, thread, frame = {}, None, None
    for line in text.splitlines():
        header = re.match(r"Thread (\d+)", line)
        if header:
            thread = walks.setdefault(int(header.group(1)), [])
            continue
        if thread is None:
            continue
        if line.startswith("Loaded modules"):
            break
        start = re.match(r"\s*(\d+)\s+(\S+?)(?:!(.+?))?(?: \[.*\])?(?: \+ 0x[0-9a-f]+)?$", line)
        if start:
            frame = [None, None, start.group(3)]
            thread.append(frame)
            continue
        for reg, value in re.findall(r"\b(eip|esp) = 0x([0-9a-f]+)", line):
            if frame is not None:
                frame[0 if reg == "eip" else 1] = int(value, 16)
    return {t: [tuple(f) for f in frames] for t, frames in walks.items()}


def breakpad(minidump_stackwalk, dump, symbols):
    args = [minidump_stackwalk, dump] + ([SYMBOLS] if symbols else [])
    out = subprocess.run(args, capture_output=True, text=True, timeout=120).stdout
    return parse_breakpad(out)


def x86_windows_dumps(stackwalk):
    found = []
    for name in sorted(os.listdir(BREAKPAD)):
        if name.endswith(".dmp") and not name.startswith("microdump"):
            out = subprocess.run([stackwalk, os.path.join(BREAKPAD, name), "--json", "--max-frames", "1"],
                                 capture_output=True, text=True, timeout=60)
            try:
                dump = json.loads(out.stdout)["dump"]
            except (ValueError, KeyError):
                continue
            if dump.get("arch") == "x86" and dump.get("os") == "windows":
                found.append(name)
    return found


def compare(ours_walks, oracle_walks):
    """The threads whose frames differ, each with the two lists of (eip, esp)."""
    differ = []
    for index, theirs in sorted(oracle_walks.items()):
        if not theirs:
            continue  # a context minidump_stackwalk cannot read
        mine = [(ip, sp) for ip, sp, _ in ours_walks.get(index, [])]
        expected = [(ip, sp) for ip, sp, _ in theirs]
        if mine != expected:
            differ.append((index, mine, expected))
    return differ


def hexes(frames):
    return [f"{ip:#x}/{sp:#x}" for ip, sp in frames]


def main(stackwalk, options):
    if not os.path.isdir(BREAKPAD):
        dumps.skip(f"{BREAKPAD} is absent")
    check = dumps.Checks()
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    if tools:
        total = {True: 0, False: 0}
        for name in x86_windows_dumps(stackwalk):
            dump = os.path.join(BREAKPAD, name)
            for symbols in (True, False):
                _, mine = ours(stackwalk, dump, symbols)
                theirs = breakpad(tools[1], dump, symbols)
                total[symbols] += sum(len(frames) for frames in theirs.values())
                differ = compare(mine, theirs)
                detail = "".join(f"\n     thread {i}: ours {hexes(a)}\n     theirs {hexes(b)}" for i, a, b in differ)
                check(not differ, f"{name} {'with' if symbols else 'without'} symbols: every thread's frames "
                                  f"as minidump_stackwalk's{detail}")
        print(f"     {total[True]} frames with symbols, {total[False]} without, compared with minidump_stackwalk")
    else:
        print("     Breakpad's minidump_stackwalk is not at hand: its kept output and rust-minidump's snapshot only")
    # Breakpad's tool reads no context of this dump (an XSTATE context of 1147 bytes);
    # its unit test asks that the dump be processed: three threads, no crash.
    report, mine = ours(stackwalk, os.path.join(BREAKPAD, "tiny-exe-with-cet-xsave-x86.dmp"), False)
    check(len(report["threads"]) == 3 and report["crash"] is None and report["dump"]["arch"] == "x86"
          and all(frames and frames[0][0] for frames in mine.values()),
          "tiny-exe-with-cet-xsave-x86.dmp: three threads, each with its context (an XSTATE context), no crash")
    # minidump2.dmp: the frames Breakpad's tests keep, and rust-minidump's without symbols.
    report, mine = ours(stackwalk, os.path.join(BREAKPAD, "minidump2.dmp"), True)
    kept = parse_breakpad(open(os.path.join(BREAKPAD, "minidump2.stackwalk.out")).read())
    check(not compare(mine, kept) and [f for _, _, f in mine[0]] == [f for _, _, f in kept[0]],
          "minidump2.dmp with symbols: CrashFunction, main, __tmainCRTStartup, BaseProcessStart, "
          "as minidump2.stackwalk.out")
    out = subprocess.run([stackwalk, os.path.join(BREAKPAD, "minidump2.dmp"), "--json", "--args", "--symbols-path",
                          SYMBOLS], capture_output=True, text=True, timeout=60)
    frames = json.loads(out.stdout)["threads"][0]["frames"]
    slots = {f["function"]: f.get("stack_slots") for f in frames}
    check(slots.get("main") == ["0x0000000000000001", "0x0000000000873930"] and "arguments" not in frames[1]
          and slots.get("`anonymous namespace'::CrashFunction") is None,
          f"minidump2.dmp --args: main's two parameter words (argc 1, argv) as raw stack slots, none for "
          f"CrashFunction, which takes none ({slots})")
    _, bare = ours(stackwalk, os.path.join(BREAKPAD, "minidump2.dmp"), False)
    snapshot = parse_breakpad(open(os.path.join(CORPUS, "rust-minidump", "snapshots", "human.snap")).read())
    check(not compare(bare, snapshot), "minidump2.dmp without symbols: the four frames rust-minidump finds")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
