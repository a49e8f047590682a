#!/usr/bin/env python3
"""bench/arm64.py STACKWALK [RUNS]: the speed of an arm64 walk against the x86-64 walk of the
same program (issue 22's target: within 1.5x), side by side in one run.

Builds bench/programs/many-threads.c (-O2 -g) for x86-64 and for arm64 and runs each under
qemu-user (qemu-x86_64, qemu-aarch64) with 50 threads; once it prints READY it is sent SIGABRT
and qemu writes the guest's core. Both cores are made the same way (no NT_FILE, no ELF headers:
stackwalk places the executable by its entry point, -e), so the two walks differ only in the
architecture. Each round walks both cores with `stackwalk CORE -e EXE -a` and with
`eu-stack -i -s --core CORE -e EXE` (the peer, names, inline frames and source lines), the
tools alternating. Prints medians over RUNS rounds (default 7), peak RSS, frame counts and the
ratio arm64 / x86-64 for each tool. A benchmark: it does not fail on a slow figure; it exits 1
when a walk fails or the two architectures' walks do not find the same number of frames.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

import measure

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "scripts"))
import dumps  # noqa: E402  (wait_until_asleep)

THREADS = 50
ARCHES = {"x86-64": ("gcc", "qemu-x86_64"), "arm64": ("aarch64-linux-gnu-gcc", "qemu-aarch64")}


def unlimited_core():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def core_of(arch, tmp):
    compiler, qemu = ARCHES[arch]
    exe = os.path.join(tmp, f"many-threads-{arch}")
    subprocess.run([compiler, "-O2", "-g", "-pthread", os.path.join(HERE, "programs", "many-threads.c"), "-o", exe],
                   check=True)
    workdir = os.path.join(tmp, "run-" + arch)
    os.makedirs(os.path.join(workdir, "core"))  # stops the host kernel's core of qemu itself
    process = subprocess.Popen([qemu, exe, str(THREADS)], cwd=workdir, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, preexec_fn=unlimited_core,
                               env=dict(os.environ, QEMU_STACK_SIZE="524288"))
    for line in process.stdout:
        if line.startswith("READY"):
            break
    # The main thread prints READY on its way to read(): caught before it gets there, its
    # stack differs between the two cores (it was in write() in one run).
    dumps.wait_until_asleep(process.pid)
    process.send_signal(6)
    process.wait(timeout=120)
    cores = [f for f in os.listdir(workdir) if f.endswith(".core")]
    if len(cores) != 1:
        raise SystemExit(f"{arch}: qemu wrote no core")
    return os.path.join(workdir, cores[0]), exe


def frames(stackwalk, core, exe):
    out = subprocess.run([stackwalk, core, "-e", exe, "-a", "--json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    return len(report["threads"]), sum(1 for t in report["threads"] for f in t["frames"]
                                       if not f["inlined"] and not f["tail_call"])


def main():
    stackwalk = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    if not stackwalk:
        print(__doc__)
        return 2
    missing = [t for arch in ARCHES.values() for t in arch if not shutil.which(t)]
    if missing or not shutil.which("eu-stack"):
        print(f"bench/arm64.py: not installed: {' '.join(missing) or 'eu-stack'}")
        return 1
    with tempfile.TemporaryDirectory(prefix="stackwalk-bench-arm64-") as tmp:
        cores = {arch: core_of(arch, tmp) for arch in ARCHES}
        counts = {arch: frames(stackwalk, *cores[arch]) for arch in ARCHES}
        tools = {"stackwalk": lambda core, exe: [stackwalk, core, "-e", exe, "-a"],
                 "eu-stack -i -s": lambda core, exe: ["eu-stack", "-i", "-s", f"--core={core}", "-e", exe]}
        times = {(tool, arch): [] for tool in tools for arch in ARCHES}
        rss = {(tool, arch): [] for tool in tools for arch in ARCHES}
        failed = False
        for round_ in range(runs + 1):  # the first round warms the page cache, untimed
            for tool, argv in tools.items():
                for arch, (core, exe) in cores.items():
                    wall, maxrss, code = measure.run_once(argv(core, exe), os.path.join(tmp, "out"),
                                                          os.path.join(tmp, "err"))
                    failed |= code != 0
                    if round_:
                        times[(tool, arch)].append(wall)
                        rss[(tool, arch)].append(maxrss)
        print(f"many-threads.c, {THREADS + 1} threads, cores from qemu-user; medians of {runs} rounds")
        for arch, (threads, physical) in counts.items():
            print(f"  {arch:7} core {os.path.getsize(cores[arch][0]) / 2**20:5.1f} MiB, stackwalk finds "
                  f"{threads} threads, {physical} physical frames")
        for tool in tools:
            medians = {arch: statistics.median(times[(tool, arch)]) for arch in ARCHES}
            for arch in ARCHES:
                print(f"  {tool:15} {arch:7} {medians[arch] * 1000:8.1f} ms  "
                      f"{statistics.median(rss[(tool, arch)]) / 1024:6.1f} MiB")
            print(f"  {tool:15} arm64 / x86-64 = {medians['arm64'] / medians['x86-64']:.2f}")
        if failed or counts["arm64"] != counts["x86-64"]:
            print(f"FAIL: a walk failed, or the frame counts differ: {counts}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
