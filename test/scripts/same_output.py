#!/usr/bin/env python3
"""For a change that must not change output (a refactoring): two stackwalk
binaries run side by side on every project dump, every peer-corpus dump that
is a plain file, and one batch, with every option that changes what is
printed; prints each difference in stdout, stderr or exit code.

Usage: same_output.py BEFORE AFTER UNPACKED_DUMPS_DIR

BEFORE is a copy of the binary built from the commit before the change. The
goldens check two variants per dump; this checks all of them, on more dumps.
"""
import difflib
import os
import subprocess
import sys

import dumps

VARIANTS = [
    ["-a"],
    ["-a", "--json", "--registers", "--raw-context"],
    ["-a", "--args"],
    ["-a", "--json", "--args"],
    ["-a", "--managed-only"],
    ["-a", "--managed-only", "--json", "--raw-context"],
    ["--summary"],
    ["--ndjson"],
    ["--runtime-info"],
    ["--max-frames", "3", "--max-threads", "2", "-a"],
    ["--thread", "1", "--thread", "999999"],
]
CORPUS_SUFFIXES = (".dmp", ".core", ".mdmp")


def run(binary, args, cwd):
    try:
        r = subprocess.run([binary] + args, cwd=cwd, capture_output=True, timeout=300)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def corpus_dumps():
    corpus = os.path.join(dumps.SHARED, "corpus")
    for root, _, files in os.walk(corpus):
        for name in sorted(files):
            if name.endswith(CORPUS_SUFFIXES):
                yield os.path.join(root, name)


def differ(before, after, args, cwd):
    b, a = run(before, args, cwd), run(after, args, cwd)
    if b == a:
        return False
    print(f"DIFF {' '.join(args)} (in {cwd}): exit {b[0]} -> {a[0]}")
    for label, x, y in (("stdout", b[1], a[1]), ("stderr", b[2], a[2])):
        if x != y:
            lines = difflib.unified_diff(x.decode(errors="replace").splitlines(),
                                         y.decode(errors="replace").splitlines(), label, label, lineterm="", n=1)
            print("\n".join(list(lines)[:40]))
    return True


def main(before, after, unpacked, options):
    cases = []
    for name, subdir, args in dumps.all_dumps():
        cases += [(args + v, os.path.join(unpacked, subdir)) for v in VARIANTS]
    for path in corpus_dumps():
        cases += [([path] + v, unpacked) for v in VARIANTS[:4] + VARIANTS[6:7]]
    cores = [os.path.join("cores", d["core"].split("/")[-1]) for d in dumps.manifest()]
    cases.append((["--json", "-j", "2", "--sysroot", "sysroot", "--module-path", "bin"] + cores, unpacked))
    different = sum(differ(before, after, args, cwd) for args, cwd in cases)
    print(f"{len(cases)} runs, {different} differ")
    return 1 if different else 0


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 3)
