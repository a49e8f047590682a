#!/usr/bin/env python3
"""manifest.py OUTDIR RUNTIME_DIR APP_DIR HERE: write OUTDIR/dumps.json for make-dumps.sh.

Reads the dumps (OUTDIR/*.core), the program's own records (park.record.json,
crash.record.json), ClrMD's output (NAME.clrmd.json) and park.tasks / park.syscalls, and
checks that each scenario thread's record agrees with ClrMD's managed frames: every recorded
frame must appear in ClrMD's frames, in the same order (ClrMD may show more: Thread.Sleep,
the frames of a throw under a catch funclet, ...). Exits 1 if one does not.
Python 3 standard library only."""
import hashlib
import json
import lzma
import os
import platform
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corefiles import read_core, covered  # noqa: E402

out, rtdir, appdir, here = sys.argv[1:5]
parent_sysroot = os.path.normpath(os.path.join(here, "..", "sysroot"))

CAPTURE = {
    "park-normal": ("createdump --normal", "MiniDumpNormal"),
    "park-heap": ("createdump --withheap", "MiniDumpWithPrivateReadWriteMemory (with heap)"),
    "park-full": ("createdump --full", "MiniDumpWithFullMemory"),
    "park-triage": ("createdump --triage", "MiniDumpFilterTriage"),
    "crash-normal": ("runtime: DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=1 (normal), unhandled exception", "MiniDumpNormal"),
    "crash-triage": ("runtime: DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=3 (triage), unhandled exception",
                     "MiniDumpFilterTriage"),
    "nullref-heap": ("runtime: DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=2 (with heap), NullReferenceException "
                     "at a method's first instruction", "MiniDumpWithPrivateReadWriteMemory (with heap)"),
    "nullref-triage": ("runtime: DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=3 (triage), DOTNET_TieredCompilation=0, "
                       "NullReferenceException at a method's first instruction", "MiniDumpFilterTriage"),
    "nullref-full": ("runtime: DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=4 (full), NullReferenceException "
                     "at a method's first instruction", "MiniDumpWithFullMemory"),
}
# What each crash threw (Program.cs): the exception type and message, and what became of the
# process (the runtime aborts after the unhandled exception and createdump).
CRASHES = {
    "crash": ("System.InvalidOperationException", "stackwalk crash scenario f"),
    "nullref": ("System.NullReferenceException", "Object reference not set to an instance of an object."),
}


def load(p, default=None):
    try:
        with open(p) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def norm(name):
    """Namespace.Type.Method without generic arguments or arity: 'Outer+Inner`1.B' and
    'Outer+Inner<System.Int32>.B[[System.__Canon, System.Private.CoreLib]]' both become
    'Outer+Inner.B'."""
    prev = None
    while prev != name:
        prev = name
        name = re.sub(r"<[^<>]*>", "", name)
        name = re.sub(r"\[[^\[\]]*\]", "", name)
    return re.sub(r"`\d+", "", name)


# ClrMD 4.1 lists a DynamicMethod's frame (a compiled expression's lambda_method) without a
# method; the program records it as DynamicClass.NAME, the runtime's own name for it.
UNNAMED = "(unnamed)"


def createdump_crash_thread(path):
    """The thread createdump's "[createdump] Crashing thread 263e signal 6" line names, or None."""
    if not os.path.exists(path):
        return None
    match = re.search(r"Crashing thread ([0-9a-f]+) signal", open(path, errors="replace").read())
    return int(match.group(1), 16) if match else None


def clrmd_name(f):
    if not f.get("method") and not f.get("type"):
        return UNNAMED
    return (f.get("type") or "?") + "." + (f.get("method") or "?")


def same_method(recorded, clrmd):
    return recorded == clrmd or (clrmd == UNNAMED and recorded.startswith("DynamicClass."))


def prstatus_tids(path):
    with open(path, "rb") as fh:
        data = fh.read()
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    tids = []
    for i in range(e_phnum):
        p_type, _, p_offset, _, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_type != 4:
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            dpos = pos + 12 + ((namesz + 3) & ~3)
            if ntype == 1:  # NT_PRSTATUS: pr_pid at offset 32
                tids.append(struct.unpack_from("<i", data, dpos + 32)[0])
            pos = dpos + ((descsz + 3) & ~3)
    return tids


def compare(rec, clrmd_thread):
    """Match the record's frames, in order, against ClrMD's ManagedMethod frames."""
    managed = [f for f in clrmd_thread["frames"] if f["kind"] == "ManagedMethod"]
    names = [norm(clrmd_name(f)) for f in managed]
    offsets = []
    for f in managed:
        try:
            offsets.append(int(f["ip"], 16) - int(f["native_code"], 16))
        except (KeyError, ValueError, TypeError):
            offsets.append(None)
    j, matched, problems = 0, [], []
    for i, rf in enumerate(rec["frames"]):
        want = norm(rf["name"])
        cands = [k for k in range(j, len(managed)) if same_method(want, names[k])]
        if not cands:
            problems.append("recorded frame %d %s not found in ClrMD's frames (in order)" % (i, rf["name"]))
            continue
        # the innermost recorded frame's offset is its call to the recorder, not ClrMD's pc
        exact = [k for k in cands if i > 0 and offsets[k] == rf["native_offset"]]
        k = exact[0] if exact else cands[0]
        matched.append((i, k))
        j = k + 1
    ks = {k for _, k in matched}
    extra = [{"index": k, "name": clrmd_name(managed[k]), "sp": managed[k]["sp"], "ip": managed[k]["ip"]}
             for k in range(len(managed)) if k not in ks]
    md = []
    for i, k in matched:
        md.append({"name": rec["frames"][i]["name"],
                   "record_method_desc": rec["frames"][i]["method_desc"],
                   "clrmd_method_desc": managed[k].get("method_desc"),
                   "equal": rec["frames"][i]["method_desc"] == managed[k].get("method_desc"),
                   "record_native_offset": rec["frames"][i]["native_offset"],
                   "clrmd_native_offset": offsets[k]})
    return {"agrees": not problems, "problems": problems, "clrmd_only_managed_frames": extra,
            "matched": md}


def thread_summary(t):
    fr = [f for f in t["frames"]]
    if not fr:
        return "no managed frames"
    parts = []
    for f in fr:
        parts.append(("[" + (f.get("frame_name") or "?") + "]") if f["kind"] != "ManagedMethod" else norm(clrmd_name(f)).split(".")[-2] + "." + f.get("method", "?").split("[")[0])
    return " <- ".join(parts)


def sha256(p):
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def build_id(p):
    try:
        r = subprocess.run(["readelf", "-nW", p], capture_output=True, text=True)
        m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
        return m.group(1) if m else None
    except OSError:
        return None


def parent_has(path):
    """The parent test/dumps/sysroot holds this exact file (xz)."""
    x = os.path.join(parent_sysroot, path.lstrip("/")) + ".xz"
    if not os.path.exists(x):
        return False
    with lzma.open(x) as a, open(path, "rb") as b:
        return a.read() == b.read()


# The program's record, and the files of the run, of each dump: the park dumps share one
# process; crash-normal's files are crash.*; every other crash dump has its own run.
def run_files(name):
    return "park" if name.startswith("park") else "crash" if name == "crash-normal" else name


records = {}
tasks = {}
if os.path.exists(os.path.join(out, "park.tasks")):
    for line in open(os.path.join(out, "park.tasks")):
        tid, _, comm = line.rstrip("\n").partition(" ")
        tasks[int(tid)] = comm
syscalls = {}
if os.path.exists(os.path.join(out, "park.syscalls")):
    for line in open(os.path.join(out, "park.syscalls")):
        sc, tid, nr, wchan = line.split()
        syscalls[int(tid)] = {"syscall": int(nr), "wchan": wchan}

dumps, modules, failed = [], {}, []
for name in ["park-normal", "park-heap", "park-full", "park-triage", "crash-normal", "crash-triage", "nullref-heap", "nullref-triage",
             "nullref-full"]:
    core = os.path.join(out, name + ".core")
    if not os.path.exists(core):
        continue
    loads, files = read_core(core)
    for f in files:
        m = modules.setdefault(f["path"], {"dumps": {}})
        d = m["dumps"].setdefault(name, {"mapped": 0, "in_core": 0})
        d["mapped"] += f["end"] - f["start"]
        d["in_core"] += covered(loads, f["start"], f["end"])
    mode = run_files(name)
    rec = records.setdefault(mode, load(os.path.join(out, mode + ".record.json")))
    clrmd = load(os.path.join(out, name + ".clrmd.json"))
    tids = prstatus_tids(core)
    entry = {
        "name": name,
        "core": "cores/%s.core" % name,
        "capture": CAPTURE[name][0],
        "dump_type": CAPTURE[name][1],
        "size": os.path.getsize(core),
        "pid": rec["pid"] if rec else None,
        "aslr": False,
        "runtime_version": rec["runtime_version"] if rec else None,
        "threads": len(tids),
        "thread_ids": tids,
        "record": "expected/%s.record.json" % mode,  # where --commit puts it
        "oracle": "expected/%s.clrmd.json" % name if clrmd else None,
        "clrmd_runtime_version": clrmd["runtime_version"] if clrmd else None,
        "crash": None,
    }
    if mode == "park":
        entry["thread_names"] = {str(t): tasks.get(t) for t in tids}
    scen = {}
    clrmd_threads = {t["os_thread_id"]: t for t in (clrmd["threads"] if clrmd else [])}
    for r in (rec["threads"] if rec else []):
        s = {"scenario": r["scenario"], "managed_thread_id": r["managed_thread_id"],
             "is_thread_pool_thread": r["is_thread_pool_thread"],
             "description": r["description"], "blocking_call": r["blocking_call"],
             "expected_managed_frames": [f["name"] for f in r["frames"]],
             "expected_method_descs": [f["method_desc"] for f in r["frames"]]}
        if r["os_thread_id"] in syscalls and mode == "park":
            s["kernel"] = syscalls[r["os_thread_id"]]
        ct = clrmd_threads.get(r["os_thread_id"])
        if ct is not None:
            s["clrmd_frames"] = [(("[" + (f.get("frame_name") or "?") + "]") if f["kind"] != "ManagedMethod" else clrmd_name(f))
                                 for f in ct["frames"]]
            s["clrmd_agreement"] = compare(r, ct)
            s["clrmd_current_exception"] = ct.get("current_exception")
            if not s["clrmd_agreement"]["agrees"]:
                failed.append("%s: scenario %s: %s" % (name, r["scenario"], s["clrmd_agreement"]["problems"]))
        elif clrmd:
            failed.append("%s: scenario %s: ClrMD has no thread %d" % (name, r["scenario"], r["os_thread_id"]))
        scen[str(r["os_thread_id"])] = s
    entry["scenario_threads"] = scen
    if clrmd:
        entry["other_managed_threads"] = {
            str(t["os_thread_id"]): {"managed_thread_id": t["managed_thread_id"], "frames": thread_summary(t)}
            for t in clrmd["threads"] if str(t["os_thread_id"]) not in scen}
        entry["native_only_threads"] = [t for t in tids if t not in clrmd_threads]
    if mode != "park" and rec:
        r = rec["threads"][0]
        stderr = open(os.path.join(out, mode + ".stderr")).read() if os.path.exists(os.path.join(out, mode + ".stderr")) else ""
        ct = clrmd_threads.get(r["os_thread_id"], {})
        exception, message = CRASHES[rec["mode"]]
        entry["crash"] = {
            "thread": r["os_thread_id"],
            "managed_thread_id": r["managed_thread_id"],
            "exception": exception,
            "message": message,
            "exit_status": int(open(os.path.join(out, mode + ".exitcode")).read()),
            "signal": "SIGABRT (the runtime aborts after the unhandled exception and createdump)",
            "clrmd_current_exception": ct.get("current_exception"),
            "clrmd_first_managed_frame": next(({"method": clrmd_name(f), "method_desc": f.get("method_desc")}
                                               for f in ct.get("frames", []) if f["kind"] == "ManagedMethod"), None),
            "runtime_stderr": [l for l in stderr.splitlines() if l.startswith(("Unhandled", "   at "))],
            # The runtime's own record: createdump, which it runs at the crash, names the thread.
            "runtime_crash_thread": createdump_crash_thread(os.path.join(out, mode + ".stdout")),
        }
    dumps.append(entry)

# the module files a reader needs (the dumps hold only some pages of each)
module_files = []
for path in sorted(modules):
    m = modules[path]
    if path.startswith(rtdir + "/") or path.startswith("/usr/share/dotnet/"):
        committed, kind = "runtime/" + os.path.basename(path) + ".xz", "runtime"
    elif path.startswith(appdir + "/"):
        committed, kind = "app/" + os.path.basename(path) + ".xz", "app"
    elif parent_has(path):
        committed, kind = "../sysroot" + path + ".xz", "system (already in test/dumps/sysroot)"
    else:
        committed, kind = "sysroot" + path + ".xz", "system"
    module_files.append({
        "recorded_path": path, "committed": committed, "kind": kind,
        "size": os.path.getsize(path), "sha256": sha256(path), "build_id": build_id(path),
        "mapped_and_in_core": m["dumps"],
    })

# files no dump maps that a reader may still want
extra_files = []
for path, committed, why in [
        (os.path.join(appdir, "StackwalkDotnet.pdb"), "app/StackwalkDotnet.pdb.xz",
         "the app's portable PDB (line numbers of the managed frames); not mapped by the process"),
        (os.path.join(rtdir, "libmscordaccore.so"), "runtime/libmscordaccore.so.xz",
         "the runtime's DAC (what ClrMD, SOS and createdump use to walk managed stacks); not mapped by the process")]:
    if os.path.exists(path):
        extra_files.append({"recorded_path": path, "committed": committed, "why": why,
                            "size": os.path.getsize(path), "sha256": sha256(path),
                            "build_id": build_id(path) if path.endswith(".so") else None})

manifest = {
    "comment": "Made by make-dumps.sh (manifest.py). Paths are relative to test/dumps/dotnet (committed as PATH.xz; unpack.py test/dumps OUT writes OUT/dotnet/PATH). module_files: every file the dumps' NT_FILE notes map, with the bytes of its mappings the dump holds (createdump saves only some pages of each module); 'committed' is where its xz copy is (../sysroot = the parent test/dumps/sysroot). scenario_threads: by OS thread id, the program's own record and ClrMD's frames ([Name] = a runtime Frame) and whether they agree.",
    "machine": platform.platform(),
    "runtime_version": records["park"]["runtime_version"] if records.get("park") else None,
    "recorded_runtime_dir": rtdir,
    "recorded_app_dir": appdir,
    "recorded_hostfxr": "/usr/share/dotnet/host/fxr/%s/libhostfxr.so" % (records["park"]["runtime_version"] if records.get("park") else "?"),
    "program": "program/ (StackwalkDotnet.csproj, net10.0, Release, apphost)",
    "oracle_tool": "clrmd-oracle/ (Microsoft.Diagnostics.Runtime 4.1.745802)",
    "sysroot_dirs": ["sysroot", "../sysroot"],
    "dumps": dumps,
    "module_files": module_files,
    "extra_files": extra_files,
}
with open(os.path.join(out, "dumps.json"), "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
if failed:
    sys.stderr.write("manifest.py: record and ClrMD disagree:\n  " + "\n  ".join(failed) + "\n")
    sys.exit(1)
