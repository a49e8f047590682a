#!/usr/bin/env python3
"""stackwalk's text and JSON output for every dump in test/dumps, against the
reviewed copies in test/golden.

Usage: golden_test.py STACKWALK UNPACKED_DUMPS_DIR [--update]

--update rewrites the golden files and prints their diff: read it before you
commit; a golden file is never regenerated blindly.
"""
import difflib
import os
import sys

import dumps

GOLDEN = os.path.join(dumps.ROOT, "test", "golden")
VARIANTS = [("txt", ["-a"]), ("json", ["-a", "--json", "--registers"])]
# The dumps made for --args also keep their arguments (text and JSON).
ARGS_VARIANTS = [("args.txt", ["-a", "--args"]), ("args.json", ["-a", "--json", "--args"])]
# -v's layout (stack pointers, MethodDescs, the column header) for one dump of each kind.
VERBOSE_DUMPS = {"crash-abort", "dotnet-crash-normal", "windows-unwind-codes"}


def variants(name):
    return (VARIANTS + (ARGS_VARIANTS if name.startswith("args-") else [])
            + ([("verbose.txt", ["-v"])] if name in VERBOSE_DUMPS else []))


def main(stackwalk, unpacked, options):
    update = "--update" in options
    failures = 0
    for name, subdir, args in dumps.all_dumps():
        for suffix, options in variants(name):
            result = dumps.run_stackwalk(stackwalk, os.path.join(unpacked, subdir), args + options)
            path = os.path.join(GOLDEN, f"{name}.{suffix}")
            want = open(path).read() if os.path.exists(path) else ""
            if result.stdout == want:
                print(f"ok   {name}.{suffix}")
                continue
            diff = list(difflib.unified_diff(want.splitlines(), result.stdout.splitlines(),
                                             f"golden/{name}.{suffix}", "stackwalk", lineterm=""))
            print(f"{'UPDATED' if update else 'FAIL'} {name}.{suffix}")
            print("\n".join(diff[:80]) + ("\n..." if len(diff) > 80 else ""))
            if update:
                os.makedirs(GOLDEN, exist_ok=True)
                with open(path, "w") as f:
                    f.write(result.stdout)
            else:
                failures += 1
    print(f"{failures} golden file(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
