#!/usr/bin/env python3
"""breakpad.py: stackwalk against Breakpad's minidump_stackwalk, both walking minidumps with
Breakpad .sym files only.

    bench/breakpad.py [--stackwalk SW] [--runs N] [--out DIR]

The minidumps are the project's test cores written as minidumps without code bytes
(test/scripts/core_to_minidump.py), the symbols Breakpad's dump_syms's .sym files of their
module files, as breakpad_symbols_test.py makes them (Breakpad's tools from npm's `minidump`
package, cached in build/breakpad). Each dump is walked, all threads, by
`stackwalk DUMP -a --symbols-path STORE --no-host-files` and `minidump_stackwalk DUMP STORE`,
alternating, one untimed round then N timed ones (default 5); the table gives each tool's median
wall time per dump and the ratio. (No peak RSS: this driver's own Python, with the test modules
imported, is larger than either tool, and a posix_spawn child's ru_maxrss counts the parent's
pages it started with.) Exit status 0 ran (whatever the figures), 1 a
tool failed, 2 setup error or the tools cannot be had.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "scripts"))

import breakpad_symbols_test  # noqa: E402
import core_to_minidump  # noqa: E402
import dumps  # noqa: E402
import measure  # noqa: E402


def main():
    args = measure.parse_args(__doc__, [], extra=())
    stackwalk = os.path.abspath(args.stackwalk)
    unpacked = os.path.join(ROOT, "build", "dumps")
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(ROOT, "build", "breakpad"))
    if not tools:
        print("bench: Breakpad's tools could not be had (npm pack minidump)")
        return 2
    out = os.path.abspath(args.out)
    store = os.path.join(out, "symbols")
    made = set()
    roots = [os.path.join(unpacked, "sysroot"), os.path.join(unpacked, "bin")]
    print(f"{'dump':<20} {'stackwalk ms':>12} {'breakpad ms':>12} {'ratio':>7}")
    ratios, failed = [], False
    for dump in dumps.manifest():
        if dump["name"] in breakpad_symbols_test.LEFT_OUT:
            continue
        core = os.path.join(unpacked, dump["core"])
        minidump = os.path.join(out, dump["name"] + ".dmp")
        core_to_minidump.write(core, minidump, roots)
        for _, _, path, _ in core_to_minidump.modules(core_to_minidump.Core(core), roots):
            breakpad_symbols_test.make_symbols(tools[0], core_to_minidump.local_file(roots, path), unpacked, store, made)
        argvs = {"stackwalk": [stackwalk, minidump, "-a", "--symbols-path", store, "--no-host-files"],
                 "breakpad": [tools[1], minidump, store]}
        outputs = {key: (os.path.join(out, f"{dump['name']}.{key}.out"), os.path.join(out, f"{dump['name']}.{key}.err"))
                   for key in argvs}
        rows = measure.time_rounds(argvs, outputs, args.runs)
        failed |= any(rows[key]["codes"] != [0] for key in rows)
        ratio = rows["stackwalk"]["ms"] / rows["breakpad"]["ms"]
        ratios.append(ratio)
        print(f"{dump['name']:<20} {rows['stackwalk']['ms']:>12.1f} {rows['breakpad']['ms']:>12.1f} {ratio:>6.2f}x")
    ratios.sort()
    print(f"median ratio stackwalk / minidump_stackwalk: {ratios[len(ratios) // 2]:.2f}x over {len(ratios)} dumps")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
