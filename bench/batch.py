#!/usr/bin/env python3
"""batch.py: the timing and checking half of bench/batch.sh (batch.sh makes the dump paths).

    batch.py --stackwalk SW --paths LIST --dumps DUMPS [--runs N] [--out DIR]

LIST holds one dump path a line, named NNNN-NAME.core after DUMPS/cores/NAME.core (DUMPS is the
unpacked test dumps: dumps.json, bin/, sysroot/). Measures, side by side:

  batch       stackwalk P1 .. Pn --json -a --sysroot S --module-path B          (default --jobs)
  batch -j1   the same with --jobs 1
  batch --untrusted   the same with --untrusted: each dump walked in a worker process of its own
  separate    stackwalk P --json -a --sysroot S --module-path B, once per path, one after another
  separate, warm cache    the same with --symbol-cache DIR (filled by the warm-up pass)
  eu-stack    eu-stack -i -s --core P -e EXE, once per path (EXE: the dump's executable in B)

Every run is measured as in measure.py (run_once: posix_spawn + wait4, the child's own
ru_maxrss). For a batch: its wall time and its one process's peak RSS. For n separate runs: the
sum of the runs' wall times (spawn to reaped, so the driver's own work between runs is left
out) and the largest peak RSS of any of them. One untimed warm-up pass over the 15 distinct dumps
first, then N rounds, in the order above; medians over the rounds.

Checks (after the timed rounds): the batch's output has n lines, each valid JSON, the i-th
naming the i-th path, with no error objects; the three batches' outputs equal the separate runs'
documents; and per dump, stackwalk's frames (inline frames included) against eu-stack -i -s's
frame lines.

Exit status: 0 ran and the batch output is right (whatever the figures), 1 stackwalk failed or
its batch output is wrong, 2 usage error.
"""
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import REQUIRED, count_frames, fmt_ratio, parse_args, run_once  # noqa: E402


def dump_name(path):
    return re.sub(r"^\d+-", "", os.path.basename(path))[: -len(".core")]


def stackwalk_frames(doc):
    return sum(len(t.get("frames") or []) for t in doc.get("threads") or [])


def main():
    args = parse_args(__doc__, [("--paths", REQUIRED), ("--dumps", REQUIRED)], runs=1)
    sw = os.path.abspath(args.stackwalk)
    dumps = os.path.abspath(args.dumps)
    with open(args.paths) as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    n = len(paths)
    with open(os.path.join(dumps, "dumps.json")) as f:
        manifest = json.load(f)
    exe_of = {os.path.basename(d["core"])[: -len(".core")]: os.path.join(dumps, d["executable"])
              for d in manifest["dumps"] if d.get("core", "").endswith(".core")}
    missing = sorted({dump_name(p) for p in paths} - set(exe_of))
    if missing:
        print(f"bench: no executable known for {missing}", file=sys.stderr)
        return 2
    common = ["--json", "-a", "--sysroot", os.path.join(dumps, "sysroot"),
              "--module-path", os.path.join(dumps, "bin")]

    def sw_one(p):
        return [sw, p] + common

    cache = os.path.join(args.out, "symbol-cache")

    def sw_cached(p):
        return sw_one(p) + ["--symbol-cache", cache]

    def eu_one(p):
        return ["eu-stack", "-i", "-s", "--core", p, "-e", exe_of[dump_name(p)]]

    sep_dirs = {"sw": os.path.join(args.out, "sep-sw"), "swc": os.path.join(args.out, "sep-sw-cache"),
                "eu": os.path.join(args.out, "sep-eu")}
    for d in sep_dirs.values():
        os.makedirs(d, exist_ok=True)
    batch_out = {"batch": os.path.join(args.out, "out-batch.ndjson"),
                 "batch1": os.path.join(args.out, "out-batch-j1.ndjson"),
                 "untrusted": os.path.join(args.out, "out-batch-untrusted.ndjson")}

    def batch(label, extra):
        wall, rss, code = run_once([sw] + paths + common + extra, batch_out[label], batch_out[label] + ".err")
        return wall, rss, [code]

    def separate(tool, argv_of):
        walls, rsss, codes = 0.0, 0, []
        for i, p in enumerate(paths):
            out = os.path.join(sep_dirs[tool], f"{i:04d}.txt")
            w, r, c = run_once(argv_of(p), out, out + ".err")
            walls += w
            rsss = max(rsss, r)
            codes.append(c)
        return walls, rsss, codes

    # Warm-up: every distinct dump once with each tool (page cache, the libraries' debug files).
    firsts = list({dump_name(p): p for p in reversed(paths)}.values())
    for p in firsts:
        run_once(sw_one(p), os.devnull, os.devnull)
        run_once(sw_cached(p), os.devnull, os.devnull)  # fills the symbol cache
        run_once(eu_one(p), os.devnull, os.devnull)

    kinds = [
        ("batch", f"stackwalk batch (--jobs default = {os.cpu_count()})", lambda: batch("batch", [])),
        ("batch1", "stackwalk batch --jobs 1", lambda: batch("batch1", ["--jobs", "1"])),
        ("untrusted", "stackwalk batch --untrusted", lambda: batch("untrusted", ["--untrusted"])),
        ("sw", f"stackwalk x {n} separate", lambda: separate("sw", sw_one)),
        ("swc", f"stackwalk x {n} separate, warm cache", lambda: separate("swc", sw_cached)),
        ("eu", f"eu-stack -i -s x {n} separate", lambda: separate("eu", eu_one)),
    ]
    samples = {k: [] for k, *_ in kinds}
    codes = {k: {} for k, *_ in kinds}
    print(f"bench: {n} dumps ({len(firsts)} distinct), 1 warm-up pass over the distinct ones, "
          f"then {args.runs} timed round(s)")
    for rnd in range(args.runs):
        for key, label, fn in kinds:
            t0 = time.perf_counter()
            wall, rss, cs = fn()
            driver = time.perf_counter() - t0
            samples[key].append((wall, rss, driver))
            for c in cs:
                codes[key][c] = codes[key].get(c, 0) + 1
            print(f"bench: round {rnd + 1}: {label}: {wall:.2f} s, peak RSS {rss / 1024:.1f} MiB", flush=True)

    rows = {}
    for key, label, _ in kinds:
        wall = statistics.median(w for w, _, _ in samples[key])
        rows[key] = {"label": label, "s": wall, "mib": statistics.median(r for _, r, _ in samples[key]) / 1024,
                     "driver": statistics.median(d for _, _, d in samples[key]),
                     "rate": n / wall, "codes": codes[key]}
    print()
    print(f"{'run':<36} {'wall s':>8} {'dumps/s':>8} {'ms/dump':>8} {'peak RSS MiB':>13}  exit codes (count)")
    for key, *_ in kinds:
        r = rows[key]
        cs = ", ".join(f"{c} x{k}" for c, k in sorted(r["codes"].items()))
        print(f"{r['label']:<36} {r['s']:>8.2f} {r['rate']:>8.1f} {1000 * r['s'] / n:>8.2f} {r['mib']:>13.1f}  {cs}")
    print(f"(separate runs: wall = sum of the {n} runs' spawn-to-reaped times, peak RSS = the largest; "
          f"with the driver's own time between runs: stackwalk {rows['sw']['driver']:.2f} s, "
          f"eu-stack {rows['eu']['driver']:.2f} s)")
    b, b1, u, s, sc, e = (rows[k] for k in ("batch", "batch1", "untrusted", "sw", "swc", "eu"))
    print()
    for label, x, y in ((f"batch (default jobs) / {n} separate stackwalk runs", b, s),
                        (f"batch --jobs 1 / {n} separate stackwalk runs", b1, s),
                        ("batch (default jobs) / batch --jobs 1", b, b1),
                        ("batch --untrusted / batch (default jobs)", u, b),
                        (f"batch (default jobs) / {n} eu-stack runs", b, e),
                        (f"batch --jobs 1 / {n} eu-stack runs", b1, e),
                        (f"{n} separate stackwalk runs / {n} eu-stack runs", s, e),
                        (f"{n} separate runs, warm cache / without", sc, s),
                        (f"{n} separate runs, warm cache / {n} eu-stack runs", sc, e)):
        print(f"{label:<50}: time {fmt_ratio(x['s'], y['s'])} (speed-up {y['s'] / x['s']:.2f}x), "
              f"peak RSS {fmt_ratio(x['mib'], y['mib'])}")

    # ------------------------------------------------------------ checks
    print()
    failed = []
    separate_docs = []
    for i in range(n):
        try:
            with open(os.path.join(sep_dirs["sw"], f"{i:04d}.txt")) as f:
                separate_docs.append(json.load(f))
        except (OSError, ValueError) as err:
            separate_docs.append(None)
            failed.append(f"separate run {i} ({paths[i]}): no JSON: {err}")
    if set(s["codes"]) != {0}:
        failed.append(f"separate stackwalk runs exited with {s['codes']}")
    cached_differ = []
    for i in range(n):
        with open(os.path.join(sep_dirs["swc"], f"{i:04d}.txt")) as f, \
                open(os.path.join(sep_dirs["sw"], f"{i:04d}.txt")) as g:
            if f.read() != g.read():
                cached_differ.append(i)
    print(f"check: separate runs with a warm --symbol-cache: {n - len(cached_differ)}/{n} outputs equal "
          f"to the runs without: {'OK' if not cached_differ else 'FAILED'}")
    if cached_differ or set(sc["codes"]) != {0}:
        failed.append(f"separate runs with the cache: exit {sc['codes']}, outputs differ at {cached_differ[:5]}")
    for key in ("batch", "batch1", "untrusted"):
        label = rows[key]["label"]
        if set(rows[key]["codes"]) != {0}:
            failed.append(f"{label}: exit {sorted(rows[key]['codes'])} (stderr: {batch_out[key]}.err)")
        with open(batch_out[key]) as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        bad_json, wrong_place, errors, differ = [], [], [], []
        for i, line in enumerate(lines):
            try:
                doc = json.loads(line)
            except ValueError:
                bad_json.append(i)
                continue
            if not isinstance(doc, dict) or (doc.get("dump") or {}).get("path") != (paths[i] if i < n else None):
                wrong_place.append(i)
            elif "error" in doc:
                errors.append(i)
            elif i < n and separate_docs[i] is not None and doc != separate_docs[i]:
                differ.append(i)
        ok = len(lines) == n and not (bad_json or wrong_place or errors)
        print(f"check: {label}: {len(lines)} lines (expected {n}), {len(lines) - len(bad_json)} valid JSON, "
              f"{len(lines) - len(bad_json) - len(wrong_place)} naming the path given at their place, "
              f"{len(errors)} error objects; equal to the separate run's document: "
              f"{len(lines) - len(bad_json) - len(wrong_place) - len(errors) - len(differ)}/{n}"
              f"{': ' + ('OK' if ok and not differ else 'FAILED') }")
        if not ok:
            failed.append(f"{label}: {len(lines)} lines, invalid JSON at {bad_json[:5]}, "
                          f"wrong path at {wrong_place[:5]}, error objects at {errors[:5]}")
        if differ:
            failed.append(f"{label}: documents differ from the separate runs' at {differ[:5]}")

    # Per dump: stackwalk's frames (inline included) against eu-stack -i -s's frame lines.
    per_name = {}
    for i, p in enumerate(paths):
        name = dump_name(p)
        if name in per_name or separate_docs[i] is None:
            continue
        per_name[name] = (stackwalk_frames(separate_docs[i]), count_frames(os.path.join(sep_dirs["eu"], f"{i:04d}.txt"), "eu-stack"))
    same = sorted(k for k, (a, b) in per_name.items() if a == b)
    diff = sorted((k, a, b) for k, (a, b) in per_name.items() if a != b)
    tot_sw = sum(stackwalk_frames(d) for d in separate_docs if d)
    tot_eu = sum(count_frames(os.path.join(sep_dirs["eu"], f"{i:04d}.txt"), "eu-stack") for i in range(n))
    print(f"check: frames in all {n} dumps: stackwalk {tot_sw}, eu-stack -i -s {tot_eu}; "
          f"equal in {len(same)}/{len(per_name)} distinct dumps"
          + (f"; differing (dump, stackwalk, eu-stack): {diff}" if diff else ""))
    print(f"check: {'FAILED: ' + '; '.join(failed) if failed else 'OK'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
