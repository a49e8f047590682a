#!/usr/bin/env python3
"""bench/live.py STACKWALK [RUNS]: stackwalk --pid against eu-stack -p and gdb -p on running
processes (issue 24), side by side in one run.

Builds bench/programs/many-threads.c and starts it with 50 and with 500 threads (each 20-30
frames deep, asleep in read()); with a dotnet SDK, also builds and parks the .NET test program
(test/dumps/dotnet/program). Each round runs, one after the other on the same process:
`stackwalk --pid P --all-threads --json` (its wall time, and the pause it reports: how long the
threads were stopped), `eu-stack -p P` (native frames, names only), `eu-stack -i -s -p P`
(with inline frames and source lines, as stackwalk prints them) and, for the native programs,
`gdb -p P -batch -ex "thread apply all bt"` (fewer rounds: it takes a second or more). Prints
medians over RUNS rounds (default 7) and stackwalk's ratios; issue 24's targets: the .NET
program's pause under 5 ms for its threads, its whole walk under 100 ms. A benchmark: it does
not fail on a slow figure; it exits 1 when a walk fails or leaves the process stopped."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(argv):
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - start, out


def park(argv, ready):
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while True:
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"{argv[0]} exited before it was ready")
        if line.startswith(ready):
            return process


def all_running(pid):
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            status = dict(line.split(":", 1) for line in f if ":" in line)
        if status["State"].split()[0] not in "SR" or int(status["TracerPid"]) != 0:
            return False
    return True


def threads_in(report, function):
    return sum(any(function in (f.get("function") or "") for f in t["frames"]) for t in report["threads"])


def bench(name, pid, stackwalk, runs, gdb_runs, managed_threads=None):
    """managed_threads: (a method, how many threads must be in it), or None."""
    rows = {"stackwalk --pid": [], "  its pause": [], "eu-stack -p": [], "eu-stack -i -s -p": [], "gdb -p": []}
    threads = None
    for round_ in range(runs):
        wall, out = timed([stackwalk, "--pid", str(pid), "--all-threads", "--json"])
        if out.returncode != 0 or not all_running(pid):
            print(f"{name}: stackwalk failed (exit {out.returncode}) or left the process stopped: {out.stderr}")
            return False
        report = json.loads(out.stdout)
        threads = len(report["threads"])
        if managed_threads and threads_in(report, managed_threads[0]) != managed_threads[1]:
            print(f"{name}: {threads_in(report, managed_threads[0])} threads in {managed_threads[0]}, "
                  f"not {managed_threads[1]}: the walk is incomplete")
            return False
        rows["stackwalk --pid"].append(wall)
        rows["  its pause"].append(report["dump"]["pause_us"] / 1e6)
        rows["eu-stack -p"].append(timed(["eu-stack", "-p", str(pid)])[0])
        rows["eu-stack -i -s -p"].append(timed(["eu-stack", "-i", "-s", "-p", str(pid)])[0])
        if gdb_runs and round_ < gdb_runs and shutil.which("gdb"):
            rows["gdb -p"].append(timed(["gdb", "-q", "-nx", "-batch", "-p", str(pid), "-ex", "thread apply all bt"])[0])
    print(f"\n{name}: {threads} threads, medians of {runs} rounds (gdb: {min(gdb_runs, runs) if rows['gdb -p'] else 0})")
    ours = statistics.median(rows["stackwalk --pid"])
    for tool, times in rows.items():
        if not times:
            continue
        median = statistics.median(times)
        ratio = "" if tool.startswith("stackwalk") or tool.startswith("  ") else f"   stackwalk / it = {ours / median:.2f}"
        print(f"  {tool:20} {median * 1000:9.1f} ms{ratio}")
    return True


def dotnet_program(tmp):
    dotnet = shutil.which("dotnet")
    if not dotnet or not subprocess.run([dotnet, "--list-sdks"], capture_output=True, text=True).stdout.strip():
        return None
    program = os.path.join(HERE, "..", "test", "dumps", "dotnet", "program")
    build = subprocess.run([dotnet, "build", "-c", "Release", "-nologo", "-v:q", "-o", f"{tmp}/dotnet",
                            f"-p:BaseIntermediateOutputPath={tmp}/obj/"], cwd=program, capture_output=True, text=True)
    return os.path.join(tmp, "dotnet", "StackwalkDotnet") if build.returncode == 0 else None


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    if not shutil.which("eu-stack") or not shutil.which("gcc"):
        raise SystemExit("bench/live.py needs eu-stack and gcc")
    ok = True
    with tempfile.TemporaryDirectory(prefix="stackwalk-bench-live-") as tmp:
        exe = os.path.join(tmp, "many-threads")
        subprocess.run(["gcc", "-O2", "-g", "-pthread", "-o", exe, os.path.join(HERE, "programs", "many-threads.c")],
                       check=True)
        for count, gdb_runs in ((50, 3), (500, 1)):
            process = park([exe, str(count)], "READY")
            try:
                ok &= bench(f"many-threads {count}", process.pid, stackwalk, runs, gdb_runs)
            finally:
                process.kill()
                process.wait()
        app = dotnet_program(tmp)
        # As built, and with 35 idle threads more (IdleScenario): 50 threads in all.
        for idle in (0, 35) if app else ():
            process = park([app, "park", os.path.join(tmp, "park.json")] + ([str(idle)] if idle else []), "READY")
            try:
                time.sleep(0.5)  # every scenario thread asleep
                title = f".NET test program{f', {idle} idle threads added' if idle else ''}"
                ok &= bench(f"{title} (targets: pause < 5 ms, walk < 100 ms)", process.pid, stackwalk, runs, 0,
                            managed_threads=("IdleScenario.Descend", idle))
            finally:
                process.kill()
                process.wait()
        if not app:
            print("\n(no dotnet SDK: the .NET program is not measured)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
