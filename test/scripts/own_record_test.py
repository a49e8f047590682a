#!/usr/bin/env python3
"""Threads that ran generated code, against the program's own record of its
stack (the return addresses it collected before blocking, in dumps.json):
code registered through the GDB JIT interface and with libunwind's
_U_dyn_register (a table of FDEs, and procedure info that libunwind's own
x86-64 unwinder does not implement).

Usage: own_record_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import shutil
import struct
import tempfile

import dumps

check = dumps.Checks()
run = dumps.run_in


def core_offset(core, address):
    """The file offset of a process address in an ELF core (its PT_LOAD segments)."""
    phoff, = struct.unpack_from("<Q", core, 0x20)
    entsize, count = struct.unpack_from("<HH", core, 0x36)
    for i in range(count):
        kind, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", core, phoff + i * entsize)
        if kind == 1 and vaddr <= address < vaddr + filesz:
            return offset + address - vaddr
    return None


def patched_registration(stackwalk, unpacked, dump, next_record, warning, what):
    """A hostile _U_dyn_info_list: the first record's `next` replaced."""
    first = int(dump["dyn_info_list"]["first"], 16)
    with open(os.path.join(unpacked, dump["core"]), "rb") as f:
        core = bytearray(f.read())
    offset = core_offset(core, first)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(unpacked, tmp, dirs_exist_ok=True, symlinks=True, ignore=lambda d, names: [
            n for n in names if n.endswith(".core") and os.path.join(d, n) != os.path.join(unpacked, dump["core"])])
        struct.pack_into("<Q", core, offset, next_record)
        with open(os.path.join(tmp, dump["core"]), "wb") as f:
            f.write(core)
        result = run(stackwalk, dumps.stackwalk_args(dump) + ["-a", "--json"], tmp, timeout=60)
    report = json.loads(result.stdout) if result.returncode == 0 else {}
    check(offset is not None and any(warning in w for w in report.get("warnings", []))
          and len(report.get("threads", [])) == dump["threads"],
          f"{dump['name']}: {what} is a warning; every thread is still walked")


def main(stackwalk, unpacked, options):
    for dump in dumps.manifest():
        expected = dump.get("expected_return_addresses")
        if not isinstance(expected, dict):
            continue
        report = json.loads(run(stackwalk, dumps.stackwalk_args(dump) + ["-a", "--json"], unpacked).stdout)
        threads = {t["tid"]: [f for f in t["frames"] if not f["inlined"] and not f["tail_call"]] for t in report["threads"]}
        for tid, addresses in expected.items():
            want = [int(a, 16) for a in addresses]
            frames = threads[int(tid)]
            ips = [int(f["ip"], 16) for f in frames]
            check(ips[-len(want):] == want,
                  f"{dump['name']} thread {tid}: the program's {len(want)} recorded return addresses, in order, "
                  f"to the end of the stack")
            # The frame after the generated code was found through its registration.
            after = next((i for i, ip in enumerate(ips) if ip == want[0]), None)
            check(after is not None and after + 1 < len(frames) and frames[after + 1]["trust"] == "dynamic",
                  f"{dump['name']} thread {tid}: unwound through the generated code by its registered info (trust dynamic)")
        if "dyn_info_list" in dump:
            first = int(dump["dyn_info_list"]["first"], 16)
            patched_registration(stackwalk, unpacked, dump, first, "loops", "a dynamic-info list that loops on itself")
            patched_registration(stackwalk, unpacked, dump, 0x10, "unreadable",
                                 "a dynamic-info record in unreadable memory")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
