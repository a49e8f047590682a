#!/usr/bin/env python3
"""bench/small.py STACKWALK DUMPS_DIR [RUNS]: small dumps, where a walk's fixed costs (startup,
reading debug info) are all there is: the 6-thread native test core (threads-O2-nofp, libc's
compressed debug file in the sysroot) and the .NET test dump (park-normal, 15 threads), each
walked with all threads by stackwalk with no symbol cache, with a warm --symbol-cache (its
decompressed debug files made by an untimed walk first), and with --max-debug-bytes 0 (no DWARF
at all: the floor), beside eu-stack -i -s on the same core. Prints median wall time and peak
memory over RUNS alternating rounds (default 15) and each figure's ratio to eu-stack's, with
issue 20's targets. A benchmark: it does not fail on a slow figure; it exits 1 when a walk
fails or the cached walk's output differs from the uncached one."""
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402

# Issue 20's targets, as ratios to eu-stack -i -s (native) or milliseconds (.NET).
TARGETS = {
    "threads-O2-nofp": "targets: no cache <= 0.3x eu-stack, warm cache <= 0.1x",
    "park-normal": "targets: no cache < 25 ms, warm cache < 10 ms",
}


def cases(dumps):
    d = os.path.join(dumps, "dotnet")
    return {
        "threads-O2-nofp": (
            os.path.join(dumps, "cores", "threads-O2-nofp.core"),
            ["--sysroot", os.path.join(dumps, "sysroot"), "--module-path", os.path.join(dumps, "bin")],
            os.path.join(dumps, "bin", "threads-O2-nofp")),
        "park-normal": (
            os.path.join(d, "cores", "park-normal.core"),
            ["--sysroot", os.path.join(dumps, "sysroot"), "--module-path", os.path.join(d, "runtime"),
             "--module-path", os.path.join(d, "app"), "--module-path",
             os.path.join(d, "sysroot", "usr", "lib", "x86_64-linux-gnu")],
            os.path.join(d, "app", "StackwalkDotnet")),
    }


def bench(name, core, paths, exe, stackwalk, runs, tmp):
    cache = os.path.join(tmp, f"cache-{name}")
    walk = [stackwalk, core, "--all-threads", *paths]
    plain = subprocess.run(walk, capture_output=True, text=True)
    cached = subprocess.run(walk + ["--symbol-cache", cache], capture_output=True, text=True)
    if plain.returncode or cached.returncode or plain.stdout != cached.stdout:
        print(f"{name}: FAILED: exit {plain.returncode}/{cached.returncode}, outputs "
              f"{'equal' if plain.stdout == cached.stdout else 'differ'}")
        return False
    argvs = {
        "stackwalk, no cache": walk,
        "stackwalk, warm --symbol-cache": walk + ["--symbol-cache", cache],
        "stackwalk --max-debug-bytes 0": walk + ["--max-debug-bytes", "0"],
    }
    if shutil.which("eu-stack"):
        argvs["eu-stack -i -s"] = ["eu-stack", "-i", "-s", "--core", core, "-e", exe]
    outputs = {k: (os.path.join(tmp, f"{name}-{i}.out"), os.path.join(tmp, f"{name}-{i}.err"))
               for i, k in enumerate(argvs)}
    rows = measure.time_rounds(argvs, outputs, runs)
    frames = measure.count_frames(outputs["stackwalk, no cache"][0], "stackwalk")
    print(f"{name}: {os.path.basename(core)}, {frames} frames; {runs} rounds, medians")
    peer = rows.get("eu-stack -i -s", {}).get("ms")
    for key, row in rows.items():
        ratio = f"  {measure.fmt_ratio(row['ms'], peer)} eu-stack" if peer else ""
        print(f"  {key:32s} {row['ms']:7.1f} ms  {row['mib']:6.1f} MiB{ratio}  exit {row['codes']}")
    print(f"  {TARGETS[name]}")
    return all(row["codes"] == [0] for key, row in rows.items() if key.startswith("stackwalk"))


def machine():
    """The line bench/run.sh prints first: ratios to eu-stack moved by 2x between sessions'
    machines with the same code (a VM whose page faults cost more, at the same core count)."""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    return (f"bench: {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}, load average {load}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    stackwalk, dumps = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    print(machine())
    ok = True
    with tempfile.TemporaryDirectory(prefix="stackwalk-small-") as tmp:
        for name, (core, paths, exe) in cases(dumps).items():
            ok &= bench(name, core, paths, exe, stackwalk, runs, tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
