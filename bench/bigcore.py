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
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import (MIN_FRAMES, REQUIRED, check_threads, compare_eu_stack, count_frames,  # noqa: E402
                     fmt_ratio, parse_args, read_json, time_rounds)

TIME_LIMIT_MS = 500.0    # target: the big core walked in under 0.5 s
# Target "peak memory does not grow with the dump's size": stackwalk's peak RSS on the big core
# may exceed its peak on the small core (same threads, same modules) by at most this much.
MEM_SLACK_RATIO = 1.10
MEM_SLACK_MIB = 4.0


def main():
    args = parse_args(__doc__, [("--exe", REQUIRED), ("--big", REQUIRED), ("--small", REQUIRED),
                                ("--threads", {"type": int, "default": 501})],
                      extra=[("--tiny", {}), ("--tiny-args", {"default": ""})])
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

    rows = time_rounds({key: argv for key, _, _, argv in tools}, outputs, args.runs)
    for key, _, kind, _ in tools:
        if kind == "json":
            rows[key]["frames"] = "-"
        else:
            rows[key]["frames"] = count_frames(outputs[key][0], "eu-stack" if kind == "eu-stack" else "stackwalk")

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
    doc = read_json(json_out, say_path=True)
    if doc is None:
        return 1
    counts = check_threads(doc, args.threads, failed, what="big core: ", all_frames=True)
    if counts is None:
        return 1
    threads, _, total = counts
    compare_eu_stack(total, outputs["big/eu"][0], "inline-inclusive", "eu-stack -i -s")
    frames = sum(total.values())
    if rows["big/sw"]["frames"] != frames:
        print(f"completeness: note: the text output has {rows['big/sw']['frames']} frame lines, the JSON {frames} frames")
    print(f"completeness: {'FAILED: ' + '; '.join(failed) if failed else 'OK (' + str(len(threads)) + ' threads, every one at least ' + str(MIN_FRAMES) + ' physical frames deep)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
