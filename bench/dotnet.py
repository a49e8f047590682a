#!/usr/bin/env python3
"""bench/dotnet.py STACKWALK DUMPS_DIR [RUNS [BASELINE]]: the mixed-mode walk of every thread of the .NET
test dump (test/dumps/dotnet, createdump --normal of 15 threads, 5 of them in managed code)
beside native-only walks of the same core: eu-stack -i -s (when installed), and stackwalk on a
native test core of similar size. Prints the median wall time and peak memory of each; checks
that the mixed walk found managed frames (exit 1 if not). A benchmark: it does not fail on a
slow figure. BASELINE, another stackwalk binary (the build before a change), walks the same dump
in the same rounds."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402


def main():
    stackwalk, dumps = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    d = os.path.join(dumps, "dotnet")
    core = os.path.join(d, "cores", "park-normal.core")
    paths = ["--sysroot", os.path.join(dumps, "sysroot"), "--module-path", os.path.join(d, "runtime"),
             "--module-path", os.path.join(d, "app"), "--module-path",
             os.path.join(d, "sysroot", "usr", "lib", "x86_64-linux-gnu")]
    argvs = {
        "stackwalk mixed (text)": [stackwalk, core, "--all-threads", *paths],
        "stackwalk mixed (json)": [stackwalk, core, "--all-threads", "--json", *paths],
        "stackwalk --managed-only": [stackwalk, core, "--all-threads", "--managed-only", *paths],
        "stackwalk native core (threads-O0-fp)": [stackwalk, os.path.join(dumps, "cores", "threads-O0-fp.core"),
                                                  "--all-threads", "--sysroot", os.path.join(dumps, "sysroot")],
    }
    if len(sys.argv) > 4:
        argvs["baseline mixed (text)"] = [os.path.abspath(sys.argv[4]), core, "--all-threads", *paths]
        argvs["baseline mixed (json)"] = [os.path.abspath(sys.argv[4]), core, "--all-threads", "--json", *paths]
    if shutil.which("eu-stack"):
        argvs["eu-stack -i -s (native only)"] = ["eu-stack", "-i", "-s", "--core", core, "-e",
                                                 os.path.join(d, "app", "StackwalkDotnet")]
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {k: (os.path.join(tmp, f"{i}.out"), os.path.join(tmp, f"{i}.err")) for i, k in enumerate(argvs)}
        rows = measure.time_rounds(argvs, outputs, runs)
        with open(outputs["stackwalk mixed (json)"][0]) as f:
            document = json.load(f)
    managed = sum(1 for t in document["threads"] for f in t["frames"] if f["kind"] == "managed")
    runtime = sum(1 for t in document["threads"] for f in t["frames"] if f["kind"] == "runtime")
    total = sum(len(t["frames"]) for t in document["threads"])
    print(f"park-normal.core: {len(document['threads'])} threads, {total} frames "
          f"({managed} managed, {runtime} runtime Frames); {runs} timed rounds, medians")
    base = rows["stackwalk mixed (text)"]["ms"]
    for key, row in rows.items():
        print(f"  {key:40s} {row['ms']:8.1f} ms  {row['mib']:6.1f} MiB  ({row['ms'] / base:.2f}x the mixed walk)")
    return 0 if managed else 1


if __name__ == "__main__":
    sys.exit(main())
