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


def cases(unpacked):
    """(golden file name, working directory, arguments) of every golden file."""
    for name, subdir, args in dumps.all_dumps():
        for suffix, options in variants(name):
            yield f"{name}.{suffix}", os.path.join(unpacked, subdir), args + options


def golden(name):
    path = os.path.join(GOLDEN, name)
    return open(path).read() if os.path.exists(path) else ""


def main(stackwalk, unpacked, options):
    update = "--update" in options
    failures = 0
    for file, directory, args in cases(unpacked):
        result = dumps.run_stackwalk(stackwalk, directory, args)
        want = golden(file)
        if result.stdout == want:
            print(f"ok   {file}")
            continue
        diff = list(difflib.unified_diff(want.splitlines(), result.stdout.splitlines(),
                                         f"golden/{file}", "stackwalk", lineterm=""))
        print(f"{'UPDATED' if update else 'FAIL'} {file}")
        print("\n".join(diff[:80]) + ("\n..." if len(diff) > 80 else ""))
        if update:
            os.makedirs(GOLDEN, exist_ok=True)
            with open(os.path.join(GOLDEN, file), "w") as f:
                f.write(result.stdout)
        else:
            failures += 1
    print(f"{failures} golden file(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
