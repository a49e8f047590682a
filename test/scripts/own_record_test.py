#!/usr/bin/env python3
"""Threads that ran generated code, against the program's own record of its
stack (the return addresses it collected before blocking, in dumps.json):
code registered through the GDB JIT interface and with libunwind's
_U_dyn_register (a table of FDEs, and procedure info that libunwind's own
x86-64 unwinder does not implement).

Usage: own_record_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json

import dumps

check = dumps.Checks()
run = dumps.run_in


def main(stackwalk, unpacked, options):
    for dump in dumps.manifest():
        expected = dump.get("expected_return_addresses")
        if not isinstance(expected, dict):
            continue
        report = json.loads(run(stackwalk, dumps.stackwalk_args(dump) + ["-a", "--json"], unpacked).stdout)
        threads = {t["tid"]: [f for f in t["frames"] if not f["inlined"]] for t in report["threads"]}
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
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
