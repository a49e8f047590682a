#!/usr/bin/env python3
"""Walking from a chosen point (--start-sp/--start-ip/--start-fp), and the
candidates --scan-from lists.

Usage: start_point_test.py STACKWALK UNPACKED_DUMPS_DIR

For every thread of every test core and each of its first physical frames k
(up to 4): starting at frame k's stack pointer, return address and frame
pointer reproduces gdb's frames k, k+1, ... (the committed oracle, gdb's
synthesized tail-call frames set aside as in oracle_test.py).
"""
import json
import subprocess
import re
import os

import dumps

check = dumps.Checks()
run = dumps.run_in


def physical(frames):
    return [f for f in frames if not f["inlined"] and not f["tail_call"]]


def smashed_stack(stackwalk, unpacked):
    """A thread that overwrote its own return-address slots: gdb follows the
    0x4141... values. --scan-from from the smashed frame's stack pointer
    offers the first intact return address, and a walk started there gives
    every return address the program recorded from that one on."""
    dump = next(d for d in dumps.manifest() if d["name"] == "smashed-stack")
    expected = [int(a, 16) for a in dump["expected_return_addresses"]]
    smashed = [s for s in dump["return_address_smashed"]]
    tid = str(dump["smashed_thread"])
    args = dumps.stackwalk_args(dump) + ["--thread", tid, "--json"]
    plain = json.loads(run(stackwalk, args, unpacked).stdout)["threads"][0]
    frames = physical(plain["frames"])
    sp = next(f["sp"] for f in frames if f["function"] == "smash_and_block")
    scan = json.loads(run(stackwalk, args + ["--scan-from", sp], unpacked).stdout)["scan"]["candidates"]
    first_intact = smashed.index(False)
    candidate = next(c for c in scan if int(c["value"], 16) == expected[first_intact])
    start = ["--start-sp", hex(int(candidate["address"], 16) + 8), "--start-ip", candidate["value"]]
    walked = physical(json.loads(run(stackwalk, args + start, unpacked).stdout)["threads"][0]["frames"])
    check([int(f["ip"], 16) for f in walked] == expected[first_intact:],
          f"smashed stack: starting at the first intact --scan-from candidate recovers the program's "
          f"{len(expected) - first_intact} recorded return addresses")
    ips = [int(f["ip"], 16) for f in frames]
    check(ips[-(len(expected) - first_intact):] == expected[first_intact:] and all(ip not in ips for ip in expected[:first_intact])
          and not any(ip == 0x4141414141414141 for ip in ips),
          "smashed stack: the plain walk refuses the overwritten slots and its scan finds the same intact frames")


def main(stackwalk, unpacked, options):
    starts = matched = 0
    mismatches = []
    for dump in dumps.manifest():
        args = dumps.stackwalk_args(dump)
        report = json.loads(run(stackwalk, args + ["-a", "--json", "--registers"], unpacked).stdout)
        with open(os.path.join(dumps.SOURCE, dump["oracle"])) as f, \
             open(os.path.join(dumps.SOURCE, dump["oracle_frame_kinds"])) as k:
            oracle = dumps.with_tail_calls_marked(json.load(f), json.load(k))
        want = {t["tid"]: [int(f["pc"], 16) for f in t["frames"] if not f["inlined"] and not f.get("tailcall")]
                for t in oracle["threads"]}
        gdb_wrong = dumps.threads_gdb_gets_wrong(dump)  # checked by smashed_stack and own_record_test.py
        for thread in report["threads"]:
            if thread["tid"] in gdb_wrong:
                continue
            frames = physical(thread["frames"])
            for k in range(1, min(5, len(frames))):
                frame = frames[k]
                start = ["--thread", str(thread["tid"]), "--start-sp", frame["sp"], "--start-ip", frame["ip"]]
                if "rbp" in frame["registers"]:
                    start += ["--start-fp", frame["registers"]["rbp"]]
                walked = json.loads(run(stackwalk, args + start + ["--json"], unpacked).stdout)["threads"][0]
                got = [int(f["ip"], 16) for f in physical(walked["frames"])]
                starts += 1
                if got == want[thread["tid"]][k:] and walked["frames"][0]["trust"] == "manual":
                    matched += 1
                else:
                    mismatches.append(f"{dump['name']} thread {thread['tid']} from frame {k}")
    check(starts and matched == starts, f"a walk started at frame k gives gdb's frames from k on: {matched}/{starts}"
          + (f" (not: {mismatches[:5]})" if mismatches else ""))

    smashed_stack(stackwalk, unpacked)
    r = run(stackwalk, ["cores/crash-segv.core", "--json", "--thread", "26361", "--scan-from", "0x7fffffffe3d0",
                        "--sysroot", "sysroot", "--module-path", "bin"], unpacked)
    values = [int(c["value"], 16) for c in json.loads(r.stdout)["scan"]["candidates"]]
    check(values[:3] == [0x7ffff7e5fce3, 0x555555555227, 0x7ffff7dfc24a],
          "--scan-from lists the thread's return addresses, each after a call in a known module")
    all_words(stackwalk, unpacked)
    r = run(stackwalk, ["cores/crash-segv.core", "-a", "--start-sp", "0x1", "--start-ip", "0x2"], unpacked)
    check(r.returncode == 2, "--start-sp with all threads: usage error")
    return check.summary()


def all_words(stackwalk, unpacked):
    """--all-words (WinDbg's dps): every word from the address, the candidates among them the
    same as without it, and each data word's symbol what gdb's `info symbol` says."""
    args = ["cores/crash-abort.core", "--json", "--scan-from", "0x7fffffffe2b0", "--scan-words", "400",
            "--sysroot", "sysroot", "--module-path", "bin"]
    document = json.loads(run(stackwalk, args + ["--all-words"], unpacked).stdout)
    check(not any(dumps.schema_validator().iter_errors(document)), "--all-words: valid against the schema")
    scan = document["scan"]
    plain = json.loads(run(stackwalk, args, unpacked).stdout)["scan"]
    slots = [int(w["address"], 16) for w in scan["words"]]
    check(slots == [0x7fffffffe2b0 + 8 * i for i in range(400)]
          and [w for w in scan["words"] if w.pop("return_address_candidate")] == plain["candidates"]
          == scan["candidates"], "--all-words: 400 consecutive words; its candidates are --scan-from's")
    if not dumps.have_gdb():
        return
    data = [w for w in scan["words"] if w["function"] and w not in plain["candidates"]]
    commands = [a for w in data for a in ("-ex", f"info symbol {w['value']}")]
    gdb = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set sysroot sysroot",
                          "-ex", "set debug-file-directory sysroot/usr/lib/debug"] + commands
                         + ["bin/crash-abort", "cores/crash-abort.core"], cwd=unpacked, capture_output=True, text=True,
                         timeout=300)
    # One answer per word: "name [+ N] in section ..." or "No symbol matches ...".
    said = re.findall(r"^(?:(\S+)(?: \+ (\d+))? in section|No symbol matches)", gdb.stdout, re.M)
    agree = sum(1 for w, (name, offset) in zip(data, said)
                if name and same_symbol(w["function"], name) and int(w["function_offset"], 16) == int(offset or 0))
    unnamed = sum(1 for _, (name, _) in zip(data, said) if not name)
    check(len(said) == len(data) > 5 and agree + unnamed == len(data) and agree > unnamed,
          f"--all-words: of {len(data)} words pointing at data, {agree} named as gdb's info symbol names them, "
          f"{unnamed} that gdb does not name")


def same_symbol(ours, gdb):
    """gdb names a local static by its DWARF name: `table` for the symbol table's `table.0`."""
    return ours == gdb or re.sub(r"\.\d+$", "", ours) == gdb


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
