#!/usr/bin/env python3
"""Every thread of every dump in test/dumps, frame for frame against gdb.

Usage: oracle_test.py STACKWALK UNPACKED_DUMPS_DIR

For each dump: stackwalk's JSON against (1) the committed oracle/NAME.gdb.json
and (2) gdb run live on the same files when gdb is installed, both through
../shared/oracle/compare.py --names (same IP sequence, same function names).
"""
import json
import os
import sys
import tempfile

import dumps


def main(stackwalk, unpacked, options):
    if not os.path.exists(dumps.COMPARE):
        dumps.skip(f"{dumps.COMPARE} is absent (../shared is not beside the project)")
    live = dumps.have_gdb()
    if not live:
        print("note: gdb is not installed; comparing with the committed oracles only")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for dump in dumps.manifest():
            name = dump["name"]
            ours = os.path.join(tmp, name + ".json")
            result = dumps.run_stackwalk(stackwalk, unpacked, dumps.stackwalk_args(dump) + ["-a", "--json"])
            with open(ours, "w") as f:
                f.write(result.stdout)
            oracles = {}
            with open(os.path.join(dumps.SOURCE, dump["oracle"])) as f, \
                 open(os.path.join(dumps.SOURCE, dump["oracle_frame_kinds"])) as k:
                oracles["committed"] = (json.load(f), json.load(k))
            if live:
                oracles["live gdb"] = dumps.gdb_oracle(unpacked, dump, tmp)
            for label, (frames, kinds) in oracles.items():
                path = os.path.join(tmp, f"{name}.{label.replace(' ', '-')}.oracle.json")
                oracle = dumps.with_tail_calls_marked(frames, kinds)
                # Where gdb goes wrong (a smashed stack, code it cannot
                # unwind), the thread is checked against the program's own
                # record instead (own_record_test.py, start_point_test.py).
                wrong = dumps.threads_gdb_gets_wrong(dump)
                oracle["threads"] = [t for t in oracle["threads"] if t["tid"] not in wrong]
                with open(path, "w") as f:
                    json.dump(oracle, f)
                ok, summary = dumps.compare(ours, path, "--tailcalls", "--verbose")
                print(f"{'ok  ' if ok else 'FAIL'} {name} vs {label}: {summary.splitlines()[-1]}")
                if not ok:
                    failures += 1
                    print("     " + summary.replace("\n", "\n     "))
    print(f"{failures} comparison(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
