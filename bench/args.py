#!/usr/bin/env python3
"""bench/args.py STACKWALK DUMPS_DIR [RUNS]: function arguments (--args) beside gdb's
`thread apply all bt`, which prints the arguments of every frame too, on the test cores
with the most argument work: recursion-alloca (374 frames, an entry value passed down 300
recursive calls) and args-O2 (entry values, structs, tail calls in glibc). Prints the median
wall time and peak memory of each and the ratio to gdb; checks that stackwalk printed
arguments (exit 1 if not). A benchmark: it does not fail on a slow figure."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402


def main():
    stackwalk, dumps = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    sysroot = os.path.join(dumps, "sysroot")
    status = 0
    for name in ("recursion-alloca", "args-O2"):
        core, exe = os.path.join(dumps, "cores", name + ".core"), os.path.join(dumps, "bin", name)
        walk = [stackwalk, core, "--all-threads", "--sysroot", sysroot, "--module-path", os.path.join(dumps, "bin")]
        argvs = {"stackwalk": walk, "stackwalk --args": walk + ["--args"]}
        if shutil.which("gdb"):
            argvs["gdb thread apply all bt"] = [
                "gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", f"set sysroot {sysroot}",
                "-ex", f"set debug-file-directory {sysroot}/usr/lib/debug", "-ex", "thread apply all bt", exe, core]
        with tempfile.TemporaryDirectory() as tmp:
            outputs = {k: (os.path.join(tmp, f"{i}.out"), os.path.join(tmp, f"{i}.err")) for i, k in enumerate(argvs)}
            rows = measure.time_rounds(argvs, outputs, runs)
            with open(outputs["stackwalk --args"][0]) as f:
                printed = sum(1 for line in f if "=" in line)
        print(f"{name}: {runs} timed rounds, medians; {printed} frame lines with arguments")
        gdb = rows.get("gdb thread apply all bt")
        for key, row in rows.items():
            ratio = f"  ({gdb['ms'] / row['ms']:.1f}x faster than gdb)" if gdb and row is not gdb else ""
            print(f"  {key:28s} {row['ms']:8.1f} ms  {row['mib']:6.1f} MiB{ratio}")
        status |= 0 if printed else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
