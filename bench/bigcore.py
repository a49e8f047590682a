#!/usr/bin/env python3
"""bigcore.py: the timing and checking half of bench/big-core.sh (big-core.sh builds and captures).

    bigcore.py --stackwalk SW --exe EXE --big CORE --small CORE [--threads N] [--runs N]
               [--out DIR] [--tiny CORE --tiny-args "ARGS"]

On the big core (several GiB) and on the small one (the same threads without the heap), runs
`stackwalk CORE -a`, `stackwalk CORE -a --json` and `eu-stack -i -s --core CORE -e EXE`,
alternating, N times each after one untimed warm-up round; and `stackwalk TINY -a ARGS` on a
tiny test dump, for its peak RSS. Each run is measured as in measure.py (run_once: posix_spawn
+ wait4, the child's own ru_maxrss). Prints a table (median wall ms, min-max, median peak RSS
MiB, frame lines, exit codes), the ratios, the project's targets (peak memory that does not
grow with the dump's size; the big core walked in under 0.5 s) and a completeness check from
the big core's JSON: N threads, each at least 20 physical frames deep, frame counts equal to
eu-stack -i -s's thread by thread.

Exit status: 0 ran and stackwalk's walk is complete (targets met or not), 1 stackwalk failed or
its stacks are incomplete, 2 usage error.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import count_frames, eu_stack_frames_per_tid, fmt_ratio, run_once  # noqa: E402

MIN_FRAMES = 20          # every thread of many-threads is at least this deep (physical frames)
TIME_LIMIT_MS = 500.0    # target: the big core walked in under 0.5 s
# Target "peak memory does not grow with the dump's size": stackwalk's peak RSS on the big core
# may exceed its peak on the small core (same threads, same modules) by at most this much.
MEM_SLACK_RATIO = 1.10
MEM_SLACK_MIB = 4.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stackwalk", required=True)
    ap.add_argument("--exe", required=True)
    ap.add_argument("--big", required=True)
    ap.add_argument("--small", required=True)
    ap.add_argument("--threads", type=int, default=501)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=".")
    ap.add_argument("--tiny")
    ap.add_argument("--tiny-args", default="")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    os.makedirs(args.out, exist_ok=True)
    sw, exe = os.path.abspath(args.stackwalk), args.exe

    tools = []   # (key, label, kind, argv)
    for tag, core in (("big", args.big), ("small", args.small)):
        tools += [
            (f"{tag}/sw", f"stackwalk -a", "stackwalk", [sw, core, "-a"]),
            (f"{tag}/swjson", f"stackwalk -a --json", "json", [sw, core, "-a", "--json"]),
            (f"{tag}/eu", f"eu-stack -i -s", "eu-stack", ["eu-stack", "-i", "-s", "--core", core, "-e", exe]),
        ]
    if args.tiny:
        tools.append(("tiny/sw", "stackwalk -a", "stackwalk", [sw, args.tiny, "-a"] + shlex.split(args.tiny_args)))
    outputs = {}
    for key, _, kind, _ in tools:
        stem = os.path.join(args.out, "out-" + key.replace("/", "-"))
        outputs[key] = (stem + (".json" if kind == "json" else ".txt"), stem + ".err")

    sizes = {"big": os.path.getsize(args.big), "small": os.path.getsize(args.small)}
    if args.tiny:
        sizes["tiny"] = os.path.getsize(args.tiny)
    for tag, path in (("big", args.big), ("small", args.small), ("tiny", args.tiny)):
        if path:
            print(f"bench: {tag} core {path} ({sizes[tag] / 2**20:.1f} MiB)")
    print(f"bench: 1 warm-up round, then {args.runs} timed rounds, tools alternating")

    samples = {key: [] for key, *_ in tools}
    codes = {key: set() for key, *_ in tools}
    for rnd in range(args.runs + 1):
        for key, _, _, argv in tools:
            wall, rss, code = run_once(argv, *outputs[key])
            if rnd > 0:
                samples[key].append((wall, rss))
                codes[key].add(code)

    rows = {}
    for key, label, kind, _ in tools:
        walls = [w for w, _ in samples[key]]
        rsss = [r for _, r in samples[key]]
        if kind == "json":
            frames = "-"
        else:
            frames = count_frames(outputs[key][0], "eu-stack" if kind == "eu-stack" else "stackwalk")
        rows[key] = {"ms": statistics.median(walls) * 1000.0, "ms_min": min(walls) * 1000.0,
                     "ms_max": max(walls) * 1000.0, "mib": statistics.median(rsss) / 1024.0,
                     "frames": frames, "codes": sorted(codes[key])}

    print()
    print(f"{'core':<6} {'MiB':>7}  {'tool':<20} {'wall ms (median)':>16} {'min-max ms':>13} "
          f"{'peak RSS MiB':>13} {'frames':>7}  exit")
    for key, label, _, _ in tools:
        tag = key.split("/")[0]
        r = rows[key]
        span = f"{r['ms_min']:.0f}-{r['ms_max']:.0f}"
        print(f"{tag:<6} {sizes[tag] / 2**20:>7.0f}  {label:<20} {r['ms']:>16.1f} {span:>13} "
              f"{r['mib']:>13.1f} {str(r['frames']):>7}  " + ",".join(map(str, r["codes"])))

    print()
    for tag in ("big", "small"):
        s, j, e = rows[f"{tag}/sw"], rows[f"{tag}/swjson"], rows[f"{tag}/eu"]
        print(f"{tag + ' core':<10}: stackwalk -a / eu-stack -i -s: time {fmt_ratio(s['ms'], e['ms'])}, "
              f"memory {fmt_ratio(s['mib'], e['mib'])}; --json / eu-stack -i -s: time "
              f"{fmt_ratio(j['ms'], e['ms'])}, memory {fmt_ratio(j['mib'], e['mib'])}")
    gib = (sizes["big"] - sizes["small"]) / 2**30
    for key, label in (("sw", "stackwalk -a"), ("swjson", "stackwalk --json"), ("eu", "eu-stack -i -s")):
        b, s = rows[f"big/{key}"], rows[f"small/{key}"]
        print(f"big / small core, {label:<16}: time {fmt_ratio(b['ms'], s['ms'])} "
              f"(+{b['ms'] - s['ms']:.1f} ms), peak RSS {fmt_ratio(b['mib'], s['mib'])} "
              f"(+{b['mib'] - s['mib']:.1f} MiB, {(b['mib'] - s['mib']) / gib:.1f} MiB per GiB of core)")
    if args.tiny:
        t = rows["tiny/sw"]
        print(f"tiny core ({sizes['tiny'] / 2**20:.1f} MiB, 3 threads): stackwalk -a peak RSS {t['mib']:.1f} MiB, "
              f"{t['ms']:.1f} ms")

    print()
    for key, label in (("sw", "stackwalk -a"), ("swjson", "stackwalk -a --json")):
        b, s = rows[f"big/{key}"], rows[f"small/{key}"]
        limit = s["mib"] * MEM_SLACK_RATIO + MEM_SLACK_MIB
        ok = b["mib"] <= limit
        print(f"target: peak RSS does not grow with the dump ({label}): {'MET' if ok else 'NOT MET'} "
              f"({b['mib']:.1f} MiB on {sizes['big'] / 2**30:.2f} GiB vs {s['mib']:.1f} MiB on "
              f"{sizes['small'] / 2**20:.0f} MiB; limit {limit:.1f} MiB = small x {MEM_SLACK_RATIO} + {MEM_SLACK_MIB:g})")
    for key, label in (("sw", "stackwalk -a"), ("swjson", "stackwalk -a --json")):
        b = rows[f"big/{key}"]
        ok = b["ms"] < TIME_LIMIT_MS
        print(f"target: {args.threads}-thread big core walked in < {TIME_LIMIT_MS / 1000:g} s ({label}): "
              f"{'MET' if ok else 'NOT MET'} ({b['ms']:.1f} ms)")

    failed = []
    for key, *_ in tools:
        if not key.endswith("/eu") and rows[key]["codes"] != [0]:
            failed.append(f"{key} exited with {rows[key]['codes']} (stderr: {outputs[key][1]})")

    # ------------------------------------------------------------ completeness (big core's JSON)
    print()
    json_out = outputs["big/swjson"][0]
    try:
        with open(json_out) as f:
            doc = json.load(f)
    except (OSError, ValueError) as err:
        print(f"completeness: FAILED: cannot read stackwalk's JSON {json_out}: {err}")
        return 1
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
        return 1
    pv, tv = sorted(phys.values()), sorted(total.values())
    shallow = sorted(tid for tid, n in phys.items() if n < MIN_FRAMES)
    print(f"completeness: big core: {len(threads)} threads; physical frames per thread min {pv[0]}, "
          f"median {statistics.median(pv):g}, max {pv[-1]}; with inline frames min {tv[0]}, "
          f"median {statistics.median(tv):g}, max {tv[-1]}; {sum(tv)} frames in all")
    print("completeness: stop reasons: " + ", ".join(f"{k} x{v}" for k, v in sorted(stops.items(), key=str)))
    print("completeness: outermost frames: " + ", ".join(f"{k} x{v}" for k, v in sorted(outermost.items())))
    if len(threads) != args.threads:
        failed.append(f"expected {args.threads} threads, the JSON has {len(threads)}")
    if shallow:
        failed.append(f"{len(shallow)} threads have fewer than {MIN_FRAMES} physical frames "
                      f"(tids {shallow[:10]}{' ...' if len(shallow) > 10 else ''})")
    theirs = eu_stack_frames_per_tid(outputs["big/eu"][0])
    same = sum(1 for tid in total if theirs.get(tid) == total[tid])
    diff = [(tid, total[tid], theirs.get(tid)) for tid in sorted(total) if theirs.get(tid) != total[tid]]
    print(f"completeness: inline-inclusive frame count equal to eu-stack -i -s's in {same}/{len(total)} threads"
          + (f"; differing (tid, stackwalk, eu-stack): {diff[:5]}" if diff else ""))
    if rows["big/sw"]["frames"] != sum(tv):
        print(f"completeness: note: the text output has {rows['big/sw']['frames']} frame lines, the JSON {sum(tv)} frames")
    print(f"completeness: {'FAILED: ' + '; '.join(failed) if failed else 'OK (' + str(len(threads)) + ' threads, every one at least ' + str(MIN_FRAMES) + ' physical frames deep)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
