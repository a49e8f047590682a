#!/usr/bin/env python3
"""measure.py: the timing and checking half of bench/run.sh (run.sh builds and captures).

    measure.py --stackwalk SW --exe EXE --core CORE [--runs N] [--out DIR] [--baseline SW0]

Runs stackwalk, eu-stack (with and without inline frames and source lines) and gdb on the same
core, alternating, N times each after one untimed warm-up round (so every tool sees a warm page
cache). Each run is its own child process, spawned directly (no shell) with stdout and stderr
going to memory files (saved to files after it exits); its wall time is taken around spawn + wait4(), and its peak RSS is the child's
own ru_maxrss from wait4(), so no run's figure includes another's.

With --baseline (another stackwalk binary, e.g. the build before a change), it runs in the same
rounds and the ratio of stackwalk to it is printed too.

Prints a table (median wall ms, median peak RSS MiB, frames printed), the ratios against the
peers, whether the project's targets are met, and a completeness check from one
`stackwalk --json` run: frames per thread, compared thread by thread with eu-stack's.

Exit status: 0 when the benchmark ran and stackwalk's walk is complete (whether or not the
targets are met: a benchmark reports, it does not gate), 1 when stackwalk failed or its stacks
are incomplete, 2 on a usage or setup error.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import sys
import time

MIN_FRAMES = 20          # every thread of many-threads is at least this deep (physical frames)
TIME_TARGET = 0.25       # stackwalk wall time <= 0.25 x eu-stack -i -s
MEM_TARGET = 1.0         # stackwalk peak RSS <= eu-stack -i -s

# What a frame line looks like in each tool's text output.
FRAME_RE = {
    "stackwalk": re.compile(r"^\s*#\d+\s"),   # "  #12  0x<sp> 0x<ip> mod!fn+0x.. [file:line]"
    "eu-stack": re.compile(r"^#\d+\s"),         # "#12 0x<ip> fn" (+ an indented source line)
    "gdb": re.compile(r"^#\d+\s"),              # "#12 0x<ip> in fn (...) at file:line"
}


def run_once(argv, out_path, err_path):
    """Spawn argv with stdout/stderr in memory files, copied to out_path and err_path once it has
    exited; return (wall_seconds, maxrss_kib, exit_code). Not written to the files while the clock
    runs: each run truncating and rewriting the same file on ext4 waited for the last run's
    write-back (2026-11-28, this VM: 3.5 ms more a warm threads-O2-nofp walk, 20 ms more an
    eu-stack -i -s run of it)."""
    exe = shutil.which(argv[0])
    if exe is None:
        raise FileNotFoundError(argv[0])
    fds = [os.open(os.devnull, os.O_RDONLY), os.memfd_create("stdout"), os.memfd_create("stderr")]
    try:
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(fds)]
        t0 = time.perf_counter()
        pid = os.posix_spawn(exe, argv, os.environ, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        save_output(fds[1], out_path)
        save_output(fds[2], err_path)
    finally:
        for fd in fds:
            os.close(fd)
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def save_output(fd, path):
    """What a run wrote to the memory file fd, into path (nothing for /dev/null)."""
    if path == os.devnull:
        return
    os.lseek(fd, 0, os.SEEK_SET)
    with open(path, "wb") as f:
        while chunk := os.read(fd, 1 << 20):
            f.write(chunk)


def count_frames(path, kind):
    rx = FRAME_RE[kind]
    with open(path, errors="replace") as f:
        return sum(1 for line in f if rx.match(line))


def eu_stack_frames_per_tid(path):
    """eu-stack text -> {tid: number of '#N' frame lines}."""
    per_tid, tid = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"^TID (\d+):", line)
            if m:
                tid = int(m.group(1))
                per_tid[tid] = 0
            elif tid is not None and FRAME_RE["eu-stack"].match(line):
                per_tid[tid] += 1
    return per_tid


def fmt_ratio(a, b):
    return f"{a / b:.2f}x" if b else "n/a"


REQUIRED = {"required": True}


def parse_args(doc, inputs, runs=5, extra=()):
    """The drivers' command line: --stackwalk, the (name, add_argument keywords) pairs of
    inputs, --runs N (default runs, at least 1), --out DIR (default ., created), then extra's."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--stackwalk", required=True)
    for name, kw in inputs:
        ap.add_argument(name, **kw)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--out", default=".")
    for name, kw in extra:
        ap.add_argument(name, **kw)
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    return args


def time_rounds(argvs, outputs, runs):
    """Run every {key: argv} once untimed, then runs timed rounds, alternating, each with the
    stdout and stderr files outputs[key]; return {key: {ms, ms_min, ms_max (wall), mib (median
    peak RSS), codes (the exit codes seen)}}. Each round starts one key further on: the same
    binary measured 0.9 ms slower first in every round, right after eu-stack, than second
    (15.63 against 14.71 ms, 101 rounds, 2026-11-29), and small.py's cold walk ran first."""
    samples = {key: [] for key in argvs}
    codes = {key: set() for key in argvs}
    keys = list(argvs)
    for rnd in range(runs + 1):
        for key in keys[rnd % len(keys):] + keys[:rnd % len(keys)]:
            wall, rss, code = run_once(argvs[key], *outputs[key])
            if rnd > 0:
                samples[key].append((wall, rss))
                codes[key].add(code)
    rows = {}
    for key in argvs:
        walls = [w for w, _ in samples[key]]
        rsss = [r for _, r in samples[key]]
        rows[key] = {
            "ms": statistics.median(walls) * 1000.0,
            "ms_min": min(walls) * 1000.0,
            "ms_max": max(walls) * 1000.0,
            "mib": statistics.median(rsss) / 1024.0,
            "codes": sorted(codes[key]),
        }
    return rows


def read_json(path, say_path=False):
    """stackwalk's JSON document in path, or None after printing FAILED (naming path when
    say_path)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        print(f"completeness: FAILED: cannot read stackwalk's JSON{' ' + path if say_path else ''}: {err}")
        return None


def check_threads(doc, expected, failed, what="", all_frames=False):
    """Completeness of stackwalk's JSON doc: prints its threads' frame counts, stop reasons and
    outermost frames (after "completeness: " + what; all_frames: the frames in all too), and
    adds to failed when it has not `expected` threads or a thread has fewer than MIN_FRAMES
    physical frames. Returns (the threads, {tid: physical frames}, {tid: frames with inline
    ones}), or None (after printing FAILED) when it has no threads."""
    threads = [t for t in (doc.get("threads") or []) if isinstance(t, dict)]
    for t in threads:
        t["frames"] = [fr for fr in (t.get("frames") or []) if isinstance(fr, dict)]
    phys = {t.get("tid"): sum(1 for fr in t["frames"] if not fr.get("inlined")) for t in threads}
    total = {t.get("tid"): len(t["frames"]) for t in threads}
    stops, outermost = {}, {}
    for t in threads:
        stops[t.get("stop_reason")] = stops.get(t.get("stop_reason"), 0) + 1
        last = next((fr for fr in reversed(t["frames"]) if not fr.get("inlined")), None)
        name = (last or {}).get("function") or "?"
        outermost[name] = outermost.get(name, 0) + 1
    if not threads:
        print("completeness: FAILED: no threads in the JSON")
        return None
    pv, tv = sorted(phys.values()), sorted(total.values())
    shallow = sorted(tid for tid, n in phys.items() if n < MIN_FRAMES)
    print(f"completeness: {what}{len(threads)} threads; physical frames per thread min {pv[0]}, "
          f"median {statistics.median(pv):g}, max {pv[-1]}; with inline frames min {tv[0]}, "
          f"median {statistics.median(tv):g}, max {tv[-1]}"
          + (f"; {sum(tv)} frames in all" if all_frames else ""))
    print("completeness: stop reasons: " + ", ".join(f"{k} x{v}" for k, v in sorted(stops.items(), key=str)))
    print("completeness: outermost frames: " + ", ".join(f"{k} x{v}" for k, v in sorted(outermost.items())))
    if len(threads) != expected:
        failed.append(f"expected {expected} threads, the JSON has {len(threads)}")
    if shallow:
        failed.append(f"{len(shallow)} threads have fewer than {MIN_FRAMES} physical frames "
                      f"(tids {shallow[:10]}{' ...' if len(shallow) > 10 else ''})")
    return threads, phys, total


def compare_eu_stack(ours, eu_path, what, label):
    """Prints in how many threads ours ({tid: frames}) equals eu-stack's output eu_path."""
    theirs = eu_stack_frames_per_tid(eu_path)
    same = sum(1 for tid in ours if theirs.get(tid) == ours[tid])
    diff = [(tid, ours[tid], theirs.get(tid)) for tid in sorted(ours) if theirs.get(tid) != ours[tid]]
    print(f"completeness: {what} frame count equal to {label}'s in {same}/{len(ours)} threads"
          + (f"; differing (tid, stackwalk, eu-stack): {diff[:5]}" if diff else ""))


def main():
    args = parse_args(__doc__, [("--exe", REQUIRED), ("--core", REQUIRED)], extra=[("--baseline", {})])

    sw, exe, core = os.path.abspath(args.stackwalk), args.exe, args.core
    tools = [
        # (label, kind for frame counting, argv)
        ("stackwalk -a", "stackwalk", [sw, core, "-a"]),
        ("eu-stack -i -s", "eu-stack", ["eu-stack", "-i", "-s", "--core", core, "-e", exe]),
        ("eu-stack (plain)", "eu-stack", ["eu-stack", "--core", core, "-e", exe]),
        ("gdb bt (all threads)", "gdb", ["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off",
                                         "-ex", "thread apply all bt", exe, core]),
    ]
    if args.baseline:
        tools.append(("stackwalk -a (baseline)", "stackwalk", [os.path.abspath(args.baseline), core, "-a"]))
    # Decompressed debug files kept by the untimed warm-up round (DecompressedDebugCache.h).
    cache = os.path.join(args.out, "symbol-cache")
    shutil.rmtree(cache, ignore_errors=True)
    tools.append(("stackwalk -a, warm cache", "stackwalk", [sw, core, "-a", "--symbol-cache", cache]))
    outputs = {}
    for i, (label, _, _) in enumerate(tools):
        stem = os.path.join(args.out, f"out-{i}-" + re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_"))
        outputs[label] = (stem + ".txt", stem + ".err")

    print(f"bench: core {core} ({os.path.getsize(core) / 2**20:.1f} MiB), exe {exe}")
    print(f"bench: 1 warm-up round, then {args.runs} timed rounds, tools alternating")
    rows = time_rounds({label: argv for label, _, argv in tools}, outputs, args.runs)
    for label, kind, _ in tools:
        rows[label]["frames"] = count_frames(outputs[label][0], kind)

    print()
    print(f"{'tool':<24} {'wall ms (median)':>16} {'min-max ms':>13} {'peak RSS MiB':>13} {'frames':>7}  exit")
    for label, _, _ in tools:
        r = rows[label]
        span = f"{r['ms_min']:.0f}-{r['ms_max']:.0f}"
        print(f"{label:<24} {r['ms']:>16.1f} {span:>13} {r['mib']:>13.1f} {r['frames']:>7}  "
              + ",".join(map(str, r["codes"])))

    s, e, ep, g = (rows[label] for label, _, _ in tools[:4])
    print()
    print(f"stackwalk / eu-stack -i -s : time {fmt_ratio(s['ms'], e['ms'])}, memory {fmt_ratio(s['mib'], e['mib'])}")
    print(f"stackwalk / eu-stack plain : time {fmt_ratio(s['ms'], ep['ms'])}, memory {fmt_ratio(s['mib'], ep['mib'])}")
    print(f"stackwalk / gdb            : time {fmt_ratio(s['ms'], g['ms'])}, memory {fmt_ratio(s['mib'], g['mib'])}")
    w = rows["stackwalk -a, warm cache"]
    print(f"warm cache / eu-stack -i -s: time {fmt_ratio(w['ms'], e['ms'])}, memory {fmt_ratio(w['mib'], e['mib'])}")
    if args.baseline:
        b = rows["stackwalk -a (baseline)"]
        print(f"stackwalk / baseline       : time {fmt_ratio(s['ms'], b['ms'])}, memory {fmt_ratio(s['mib'], b['mib'])}")
    t_ok = s["ms"] <= TIME_TARGET * e["ms"]
    m_ok = s["mib"] <= MEM_TARGET * e["mib"]
    print(f"target: wall time <= {TIME_TARGET}x eu-stack -i -s : {'MET' if t_ok else 'NOT MET'} "
          f"({s['ms']:.1f} ms vs limit {TIME_TARGET * e['ms']:.1f} ms)")
    print(f"target: peak RSS  <= eu-stack -i -s       : {'MET' if m_ok else 'NOT MET'} "
          f"({s['mib']:.1f} MiB vs {e['mib']:.1f} MiB)")

    failed = []
    if s["codes"] != [0]:
        failed.append(f"stackwalk exited with {s['codes']} (stderr: {outputs['stackwalk -a'][1]})")

    # ------------------------------------------------------------ completeness (JSON)
    print()
    json_out = os.path.join(args.out, "stackwalk.json")
    wall, rss, code = run_once([sw, core, "-a", "--json"], json_out, json_out + ".err")
    print(f"completeness: stackwalk --json -a: exit {code}, {wall * 1000:.1f} ms, {rss / 1024:.1f} MiB")
    doc = read_json(json_out)
    if doc is None:
        return 1
    if code != 0:
        failed.append(f"stackwalk --json exited with {code} (stderr: {json_out}.err)")
    counts = check_threads(doc, 201, failed)
    if counts is None:
        return 1
    _, phys, total = counts

    # Thread by thread against eu-stack: plain = physical frames, -i = with inline frames.
    for label, ours, what in (("eu-stack (plain)", phys, "physical"), ("eu-stack -i -s", total, "inline-inclusive")):
        compare_eu_stack(ours, outputs[label][0], what, label)
    print(f"completeness: {'FAILED: ' + '; '.join(failed) if failed else 'OK (every thread at least ' + str(MIN_FRAMES) + ' physical frames deep)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
