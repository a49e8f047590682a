#!/usr/bin/env python3
"""Function arguments (--args) against gdb: the args-O0 / args-O2 dumps and every
other dump in test/dumps.

Usage: args_test.py STACKWALK UNPACKED_DUMPS_DIR

1. args-O0 and args-O2: `stackwalk CORE --all-threads --json --args` against the
   committed oracle/NAME.gdb-args.json (gdb-frames.py with ORACLE_ARGS, tail-call
   frames set aside with oracle/NAME.gdb-kinds.json) through
   ../shared/oracle/compare.py --args --names (integer-like values: ints, chars,
   pointers); then every value gdb shows for the program's own frames, as text
   (structs, floats, bools, enums too), each entry value gdb's bt shows (`n@entry`)
   against the JSON's entry_value, and each type as gdb's `whatis` spells it (or as
   the DWARF names a base type: `long unsigned int` for `unsigned long`).
2. With gdb installed: every dump in test/dumps/dumps.json, gdb run live with
   ORACLE_ARGS (test/dumps/oracle.sh) against stackwalk's JSON, compare.py --args
   --names; threads gdb gets wrong (dumps.threads_gdb_gets_wrong) are set aside as
   in oracle_test.py, and so are arguments gdb cannot read (`<error reading
   variable: ...>` in its bt: gdb gives up resolving an entry value passed down 300
   recursive calls in recursion-alloca) and KNOWN_GDB_MISSES (values gdb shows as
   <optimized out> that the source fixes; stackwalk's must then be that or none).
   One summary line per dump and the totals.
3. The text output (`stackwalk CORE ... -a --args`): every frame of the program's
   own functions against the same frame of gdb's `bt` (oracle/NAME.gdb-bt-full.txt:
   `set print frame-arguments all`), argument for argument (`n=n@entry=199`,
   `m=22, m@entry=7`, `v=<optimized out>, v@entry=31`, structs member by member,
   `113 'q'`, enumerators by name; gdb's ` <symbol>` after a pointer is not
   expected), and a few of args-O2's lines spelled out.

Parts 1 and 2 need ../shared/oracle/compare.py (skipped without it); part 2 needs
gdb (skipped without it, the others still run). Exits 77 when the args dumps are
not unpacked.
"""
import json
import os
import re
import subprocess
import tempfile

import dumps

check = dumps.Checks()
ARGS_DUMPS = ("args-O0", "args-O2")

# The program's functions' parameter types, as gdb's `whatis FUNCTION` prints them
# (gdb 13, both builds): e.g. `type = long (int, unsigned long, char, _Bool, enum color)`.
GDB_TYPES = {
    "join_workers": {"ids": "pthread_t *", "count": "unsigned int"},
    "scalar_args": {"i": "int", "ul": "unsigned long", "c": "char", "b": "_Bool", "e": "enum color"},
    "pointer_args": {"local_p": "int *", "global_p": "long *"},
    "wait_read": {"fd": "int", "buf": "char *", "len": "unsigned long"},
    "struct_args": {"p": "struct point", "b": "struct big", "f": "float", "d": "double"},
    "wait_cond": {"id": "int"},
    "stack_args": dict({"a%d" % i: "int" for i in range(1, 8)}, a8="long", a9="long"),
    "wait_pause": {"why": "int"},
    "inline_host": {"fd": "int", "k": "int"},
    "inline_reader": {"fd": "int", "limit": "long", "tag": "char"},
    "entry_outer": {"seed": "int"},
    "entry_changed": {"m": "int"},
    "entry_lost": {"v": "int"},
    "entry_leaf": {"n": "int"},
    "park": {"tag": "int"},
    "scalars_worker": {"arg": "void *"},
}

# args-O2's text lines, as gdb's bt (frame-arguments all) prints them: function -> what
# its frame's argument list must contain.
O2_LINES = [
    ("entry_leaf", ["n=n@entry=199"], "a parameter known only by its entry value (DW_OP_entry_value + call site)"),
    ("entry_changed", ["m=22, m@entry=7"], "a changed parameter: value and entry value"),
    ("entry_lost", ["v=<optimized out>, v@entry=31"], "a parameter gone but for its entry value"),
    ("entry_outer", ["seed=seed@entry=42"], "a callee-saved register (rbx) equal to the entry value"),
    ("struct_args", ["p=p@entry={x = 3, y = 4}"], "a small struct by value, in a register, member by member"),
    ("struct_args", ["b={id = 48879, count = 1000000, kind = -2, flags = 165, weight = 0.5, tail = 77}"],
     "a 40-byte struct by value, in the caller's outgoing area"),
    ("struct_args", ["f=f@entry=3.5", "d=d@entry=1.1000000000000001"], "float and double with gdb's digits"),
    ("scalar_args", ["i=i@entry=-7", "ul=ul@entry=24301", "c=c@entry=113 'q'", "b=b@entry=true",
                     "e=e@entry=COLOR_GREEN"], "int, unsigned long, char, _Bool, enum"),
    ("pointer_args", ["global_p=global_p@entry=0x555555558100"], "a pointer to a global, in hex"),
    ("stack_args", ["a1=a1@entry=11", "a6=a6@entry=66, a7=77, a8=88, a9=99"],
     "register arguments and arguments 7-9 on the stack"),
    ("inline_reader", ["tag=122 'z'", "limit=4096", "fd=3"], "an inlined callee's parameters"),
    ("inline_host", ["fd=3, k=k@entry=5"], "the function the callee is inlined into"),
    ("scalars_worker", ["arg=<optimized out>"], "an entry value whose caller calls through a pointer"),
]


# ------------------------------------------------------------------ parsing argument lists
def split_args(text):
    """gdb's `a=1, b={x = 3, y = 4}, c=44 ','` -> ['a=1', 'b={x = 3, y = 4}', "c=44 ','"]."""
    out, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(<":
            depth += 1
        elif ch in "}])>":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and text[i + 1:i + 2] == " ":
            out.append(text[start:i])
            start = i + 2
            i += 1
        i += 1
    if text[start:]:
        out.append(text[start:])
    return out


def balanced(text, open_at):
    """The text inside the parenthesis at text[open_at], quotes and nesting respected."""
    depth, quote, i = 0, None, open_at
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i]
        i += 1
    return None


def normalize(item):
    """gdb prints `0x555555558100 <args_global>` for a pointer to a symbol; stackwalk
    prints the hex only."""
    return re.sub(r"(0x[0-9a-f]+) <[^<>]*>", r"\1", item)


def gdb_bt(text):
    """gdb's `thread apply all bt` (oracle/NAME.gdb-bt*.txt) -> {tid: [(function, [items])]},
    innermost first, one entry per `#N` line (function None for `<signal handler called>`)."""
    threads, tid = {}, None
    for line in text.splitlines():
        m = re.match(r"Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)\)", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        if tid is None or not re.match(r"#\d+\s", line):
            continue
        m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(", line)
        args = balanced(line, m.end() - 1) if m else None
        threads[tid].append((m.group(1) if m else None, [normalize(a) for a in split_args(args or "")]))
    return threads


def read_file(path):
    with open(path) as f:
        return f.read()


def stackwalk_text(text):
    """stackwalk's text -> {tid: [(function, inlined, [items] or None)]}."""
    threads, tid = {}, None
    for line in text.splitlines():
        m = re.match(r"Thread (\d+)", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        m = re.match(r"\s+#\d+\s.*?!([^\s+(]+)(\+0x[0-9a-f]+)?", line)
        if m and tid is not None:
            items = None
            if line[m.end():m.end() + 2] == " (":
                inner = balanced(line, m.end() + 1)
                items = [normalize(a) for a in split_args(inner)] if inner is not None else None
            threads[tid].append((m.group(1), "(inlined)" in line, items, line.strip()))
    return threads


def pair_frames(gdb_frames, our_frames):
    """gdb's frames with ours, by function name in order (gdb's tail-call frames have no
    counterpart)."""
    pairs, j = [], 0
    for fn, items in gdb_frames:
        k = next((k for k in range(j, len(our_frames)) if our_frames[k][0] == fn), None)
        if k is None:
            continue
        pairs.append((fn, items, our_frames[k]))
        j = k + 1
    return pairs


def indent(text, limit=15):
    lines = text.splitlines()
    more = len(lines) - limit
    shown = lines[:limit - 1] + [f"... ({more} more lines)", lines[-1]] if more > 0 else lines
    return "\n".join("     " + x for x in shown)


# ------------------------------------------------------------------ running
def run_args(stackwalk, unpacked, dump, json_output):
    args = dumps.stackwalk_args(dump) + ["--all-threads", "--args"] + (["--json"] if json_output else [])
    result = dumps.run_stackwalk(stackwalk, unpacked, args, check=False)
    if result.returncode != 0:
        print(f"     stackwalk {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[:400]}")
        return None
    if not json_output:
        return result.stdout
    try:
        return json.loads(result.stdout)
    except ValueError as e:
        print(f"     stackwalk's JSON does not parse: {e}")
        return None


# Arguments gdb shows as <optimized out> whose value is known from the source: gdb makes no
# tail-call frame for glibc's ___pthread_join under these C++ mains (it does under args-O2's
# C one, and prints block=block@entry=true there), so it has no call-site value for `block`;
# ___pthread_join is `return __pthread_clockjoin_ex (threadid, thread_return, 0, NULL, true);`
# (nptl/pthread_join.c). stackwalk may show the value (it must then be this one) or none.
# On ARM gdb-multiarch makes no tail-call frame for __pthread_kill_internal nor
# ___pthread_join either: `return __pthread_kill_implementation (threadid, signo, 0);`
# (nptl/pthread_kill.c), and crash-cxx-uncaught's main joins with pthread_join(t, NULL).
KNOWN_GDB_MISSES = {
    ("cxx-throw", "__pthread_clockjoin_ex", "block"): "true",
    ("crash-cxx-uncaught", "__pthread_clockjoin_ex", "block"): "true",
    ("crash-cxx-uncaught", "__pthread_clockjoin_ex", "thread_return"): "0x0",
    ("crash-cxx-uncaught", "___pthread_join", "thread_return"): "0x0",
    ("crash-cxx-uncaught", "__pthread_kill_implementation", "no_tid"): "0",
    ("crash-abort", "__pthread_kill_implementation", "no_tid"): "0",
}


def set_aside(frames, dump, bt_text, report):
    """Takes out of gdb's frames the arguments gdb could not read (`<error reading
    variable: ...>` in its bt, e.g. "DWARF-2 expression error: Loop detected" where an
    entry value is passed down 300 recursive calls) and KNOWN_GDB_MISSES, checking
    stackwalk's value for the latter. Returns how many were set aside."""
    errors = gdb_bt(bt_text) if bt_text else {}
    ours = {t["tid"]: t["frames"] for t in report["threads"]}
    n = 0
    for t in frames["threads"]:
        bt = errors.get(t["tid"])
        aligned = bt is not None and len(bt) == len(t["frames"])
        j = 0
        for i, f in enumerate(t["frames"]):
            unreadable = set()
            if aligned and bt[i][0] == f["function"]:
                unreadable = {m.group(1) for m in (re.match(r"(\w+)=<error reading variable", x) for x in bt[i][1]) if m}
            # stackwalk's frame for this one (by name, in order), for the known misses
            k = next((k for k in range(j, len(ours.get(t["tid"], []))) if ours[t["tid"]][k].get("function") == f["function"]), None)
            if k is not None:
                j = k + 1
            keep = []
            for a in f.get("args", []):
                truth = KNOWN_GDB_MISSES.get((dump["name"], f["function"], a["name"]))
                if a["value"] is None and a["name"] in unreadable:
                    n += 1
                    continue
                if a["value"] is None and truth is not None:
                    have = next((x for x in (ours[t["tid"]][k].get("arguments") or [] if k is not None else [])
                                 if x["name"] == a["name"]), None)
                    got = None if have is None else have.get("value")
                    check(got in (None, truth), f"{dump['name']} thread {t['tid']} {f['function']} {a['name']}: "
                                                f"gdb has no value, the source passes {truth}; stackwalk {got}")
                    n += 1
                    continue
                keep.append(a)
            if "args" in f:
                f["args"] = keep
    return n


def compare_args(report, frames, kinds, dump, tmp, label, bt_text=None):
    """compare.py --args --names; returns (ok, its output, its summary line,
    (matched, compared, invented), arguments set aside)."""
    ours = os.path.join(tmp, f"{dump['name']}.{label}.ours.json")
    with open(ours, "w") as f:
        json.dump(report, f)
    aside = set_aside(frames, dump, bt_text, report)
    oracle = dumps.with_tail_calls_marked(frames, kinds)
    wrong = dumps.threads_gdb_gets_wrong(dump)
    oracle["threads"] = [t for t in oracle["threads"] if t["tid"] not in wrong]
    path = os.path.join(tmp, f"{dump['name']}.{label}.oracle.json")
    with open(path, "w") as f:
        json.dump(oracle, f)
    ok, out = dumps.compare(ours, path, "--args", "--verbose")
    last = out.splitlines()[-1] if out else "(no output)"
    m = re.search(r"args (\d+)/(\d+); values where the oracle has none: (\d+)", last)
    counts = tuple(int(x) for x in m.groups()) if m else (0, 0, 0)
    return ok, out, last, counts, aside


def exact_values(report, oracle, dump):
    """Every value gdb shows for the program's frames, as text (not only integers)."""
    program = set(GDB_TYPES)
    by_tid_all = {t["tid"]: t["frames"] for t in report["threads"]}
    bad, compared = [], 0
    for t in oracle["threads"]:
        ours = by_tid_all.get(t["tid"], [])
        j = 0
        for f in t["frames"]:
            k = next((k for k in range(j, len(ours)) if ours[k].get("function") == f["function"]), None)
            if k is None:
                continue
            j = k + 1
            if f["function"] not in program:
                continue
            have = {a["name"]: a for a in ours[k].get("arguments") or []}
            for a in f["args"]:
                compared += 1
                h = have.get(a["name"])
                want = None if a["value"] is None else normalize(a["value"])
                got = None if h is None or h.get("value") is None else normalize(h["value"])
                if h is None:
                    bad.append(f"{f['function']}.{a['name']} missing (gdb: {a['value']})")
                elif got != want:
                    bad.append(f"{f['function']}.{a['name']} = {h.get('value')!r}, gdb {a['value']!r}")
    return compared, bad


def entry_values(report, bt_path):
    """gdb's `name=name@entry=V` / `name@entry=V` against the JSON's entry_value."""
    gdb = gdb_bt(read_file(bt_path))
    bad, compared = [], 0
    for t in report["threads"]:
        ours = [(f.get("function"), f.get("inlined"), f.get("arguments")) for f in t["frames"]]
        for fn, items, (_, _, arguments) in pair_frames(gdb.get(t["tid"], []), ours):
            if fn not in GDB_TYPES:
                continue
            have = {a["name"]: a for a in arguments or []}
            for item in items:
                m = re.match(r"(\w+)=\1@entry=(.*)$", item) or re.match(r"(\w+)@entry=(.*)$", item)
                if not m:
                    continue
                compared += 1
                h = have.get(m.group(1))
                got = None if h is None or h.get("entry_value") is None else normalize(h["entry_value"])
                if got != m.group(2):
                    bad.append(f"{fn}.{m.group(1)}@entry: {None if h is None else h.get('entry_value')!r}, gdb {m.group(2)!r}")
    return compared, bad


# gcc's DWARF names base types `long unsigned int`, `long int`, ...; gdb prints them as C
# programmers write them. Either spelling is C; a struct, union or enum without its keyword
# is not.
BASE_TYPE_SPELLINGS = {"long int": "long", "long unsigned int": "unsigned long", "short int": "short",
                       "short unsigned int": "unsigned short", "long long int": "long long",
                       "long long unsigned int": "unsigned long long"}


def c_type(name):
    if name is None:
        return None
    for dwarf, c in BASE_TYPE_SPELLINGS.items():
        name = re.sub(r"\b%s\b" % dwarf, c, name)
    return name


def types(report):
    bad, compared = [], 0
    for t in report["threads"]:
        for f in t["frames"]:
            want = GDB_TYPES.get(f.get("function"))
            if not want:
                continue
            have = {a["name"]: a.get("type") for a in f.get("arguments") or []}
            for name, ty in want.items():
                compared += 1
                if c_type(have.get(name)) != ty:
                    bad.append(f"{f['function']}.{name}: {have.get(name)!r}, gdb {ty!r}")
    return compared, sorted(set(bad))


def text_lines(text, bt_path, dump):
    """Each of the program's frame lines against gdb's bt, argument for argument."""
    gdb = gdb_bt(read_file(bt_path))
    ours = stackwalk_text(text)
    bad, compared = [], 0
    for tid, frames in gdb.items():
        for fn, items, (_, inlined, have, line) in pair_frames(frames, ours.get(tid, [])):
            if fn not in GDB_TYPES or not items:
                continue
            compared += 1
            same = have is not None and (sorted(have) == sorted(items) if inlined else have == items)
            if not same:
                bad.append(f"{fn}: stackwalk ({', '.join(have) if have is not None else 'no argument list'}), "
                           f"gdb ({', '.join(items)})")
    return compared, bad


def frame_line(text, function):
    for frames in stackwalk_text(text).values():
        for fn, _, items, line in frames:
            if fn == function:
                return items, line
    return None, None


# ------------------------------------------------------------------ the parts
def part_args_dumps(stackwalk, unpacked, have_compare, tmp):
    """Parts 1 and 3 on args-O0 and args-O2."""
    manifest = {d["name"]: d for d in dumps.manifest()}
    for name in ARGS_DUMPS:
        dump = manifest[name]
        src = lambda key: os.path.join(dumps.SOURCE, dump[key])
        with open(src("oracle_args")) as f, open(src("oracle_frame_kinds")) as k:
            frames, kinds = json.load(f), json.load(k)
        print(f"---- {name}")
        report = run_args(stackwalk, unpacked, dump, True)
        check(report is not None, f"{name}: stackwalk --all-threads --json --args runs and its JSON parses")
        if report is not None:
            if have_compare:
                ok, out, last, _, aside = compare_args(report, json.loads(json.dumps(frames)), kinds, dump, tmp,
                                                       "committed", read_file(src("oracle_bt")))
                check(ok and not aside, f"{name} vs the committed gdb arguments oracle (compare.py --args --names): "
                                        f"{last}" + (f"; {aside} set aside" if aside else ""))
                if not ok:
                    print(indent(out))
            n, bad = exact_values(report, frames, dump)
            check(n > 0 and not bad, f"{name}: every value gdb shows for the program's frames, as gdb prints it "
                                     f"({n - len(bad)}/{n})")
            for b in bad[:40]:
                print("     " + b)
            n, bad = entry_values(report, src("oracle_bt_full"))
            if name == "args-O0":  # gcc -O0 emits no call-site records: gdb shows no @entry
                check(n == 0, f"{name}: gdb's bt shows no entry values at -O0 (it shows {n})")
            else:
                check(n > 0 and not bad, f"{name}: every entry value gdb's bt shows (name@entry) is the JSON's "
                                         f"entry_value ({n - len(bad)}/{n})")
            for b in bad[:40]:
                print("     " + b)
            n, bad = types(report)
            check(n > 0 and not bad, f"{name}: parameter types as gdb's whatis spells them ({n - len(bad)}/{n})")
            for b in bad[:40]:
                print("     " + b)
        text = run_args(stackwalk, unpacked, dump, False)
        check(text is not None, f"{name}: stackwalk -a --args (text) runs")
        if text is None:
            continue
        n, bad = text_lines(text, src("oracle_bt_full"), dump)
        check(n > 0 and not bad, f"{name}: each program frame's text argument list is gdb's bt's "
                                 f"({n - len(bad)}/{n} frames)")
        for b in bad[:40]:
            print("     " + b)
        if name != "args-O2":
            continue
        for function, wants, what in O2_LINES:
            items, line = frame_line(text, function)
            joined = ", ".join(items) if items is not None else ""
            missing = [w for w in wants if w not in joined]
            check(line is not None and not missing,
                  f"args-O2 {function}: {what}: {' / '.join(wants)}")
            if missing:
                print(f"     stackwalk: {line}")
        # the JSON behind those lines
        if report is not None:
            def arg(function, param):
                for t in report["threads"]:
                    for f in t["frames"]:
                        if f.get("function") == function:
                            return next((a for a in f.get("arguments") or [] if a["name"] == param), None)
                return None
            n, v, m = arg("entry_leaf", "n"), arg("entry_lost", "v"), arg("entry_changed", "m")
            check(n is not None and (n["value"], n["entry_value"]) == ("199", "199"),
                  f"args-O2 JSON entry_leaf n: value 199, entry_value 199 (got {n})")
            check(v is not None and v["value"] is None and v["entry_value"] == "31" and v.get("reason"),
                  f"args-O2 JSON entry_lost v: value null with a reason, entry_value 31 (got {v})")
            check(m is not None and (m["value"], m["entry_value"]) == ("22", "7"),
                  f"args-O2 JSON entry_changed m: value 22, entry_value 7 (got {m})")
            w = arg("scalars_worker", "arg")
            check(w is not None and w["value"] is None and w.get("reason"),
                  f"args-O2 JSON scalars_worker arg: no value, with a reason (got {w})")


def part_live(stackwalk, unpacked, tmp):
    """Part 2: every dump against gdb run live with ORACLE_ARGS."""
    totals = [0, 0, 0, 0]
    failed = []
    for dump in dumps.manifest():
        name = dump["name"]
        report = run_args(stackwalk, unpacked, dump, True)
        if report is None:
            check(False, f"{name}: stackwalk --json --args")
            continue
        try:
            frames, kinds, bt_text = live_oracle(unpacked, dump, tmp)
        except RuntimeError as e:
            check(False, f"{name}: {e}")
            continue
        ok, out, last, counts, aside = compare_args(report, frames, kinds, dump, tmp, "live", bt_text)
        wrong = dumps.threads_gdb_gets_wrong(dump)
        notes = ([f"{len(wrong)} thread(s) gdb gets wrong set aside"] if wrong else []) + \
                ([f"{aside} argument(s) gdb cannot read or misses set aside"] if aside else [])
        check(ok, f"{name} vs live gdb --args: {last}" + (f" ({'; '.join(notes)})" if notes else ""))
        if not ok:
            failed.append(name)
            print(indent(out))
        totals = [a + b for a, b in zip(totals, counts + (aside,))]
    print(f"live gdb, all dumps: args matched {totals[0]} / compared {totals[1]}; "
          f"values where gdb has none (invented): {totals[2]}; set aside (gdb cannot read them): {totals[3]}"
          + (f"; dumps that differ: {' '.join(failed)}" if failed else ""))


def live_oracle(unpacked, dump, out_dir):
    """gdb-frames.py with ORACLE_ARGS and frame-kinds.py, live (test/dumps/oracle.sh)."""
    name = dump["name"]
    script = os.path.join(dumps.SOURCE, "oracle.sh")
    paths = {}
    for label, helper, extra in (("args", dumps.GDB_FRAMES, {"ORACLE_ARGS": "1"}),
                                 ("kinds", os.path.join(dumps.SOURCE, "frame-kinds.py"), {})):
        path = os.path.join(out_dir, f"{name}.live-{label}.json")
        env = dict(os.environ, GDB_FRAMES=helper)
        env.pop("ORACLE_ARGS", None)
        env.update(extra)
        subprocess.run(["sh", script, unpacked, name, path, dump["executable"]], env=env,
                       capture_output=True, timeout=300)
        if not os.path.exists(path):
            raise RuntimeError(f"gdb wrote no {label} oracle")
        paths[label] = path
    sysroot = os.path.join(unpacked, "sysroot")
    bt = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off", "-ex", "set pagination off",
                         "-ex", "set width 0", "-ex", "set backtrace past-main on", "-ex", "set backtrace past-entry on",
                         "-ex", f"set sysroot {sysroot}", "-ex", f"set debug-file-directory {sysroot}/usr/lib/debug",
                         "-ex", "thread apply all bt", os.path.join(unpacked, dump["executable"]),
                         os.path.join(unpacked, dump["core"])], capture_output=True, text=True, timeout=300)
    with open(paths["args"]) as f, open(paths["kinds"]) as k:
        return json.load(f), json.load(k), bt.stdout


def main(stackwalk, unpacked, options):
    manifest = {d["name"]: d for d in dumps.manifest()}
    missing = [n for n in ARGS_DUMPS if n not in manifest]
    if missing:
        dumps.skip(f"{', '.join(missing)} not in test/dumps/dumps.json")
    for name in ARGS_DUMPS:
        if not os.path.exists(os.path.join(unpacked, manifest[name]["core"])):
            dumps.skip(f"{name} is not unpacked in {unpacked} (unpack.py test/dumps {unpacked})")
    have_compare = os.path.exists(dumps.COMPARE)
    if not have_compare:
        print(f"note: {dumps.COMPARE} is absent (../shared is not beside the project): "
              "no compare.py comparisons (parts 1 and 2)")
    with tempfile.TemporaryDirectory() as tmp:
        part_args_dumps(stackwalk, unpacked, have_compare, tmp)
        print("---- every dump against gdb run live")
        if not have_compare:
            print("skipped: no compare.py")
        elif not dumps.have_gdb():
            print("skipped: gdb is not installed (the committed args oracles were compared above)")
        else:
            part_live(stackwalk, unpacked, tmp)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
