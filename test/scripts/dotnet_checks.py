"""Checks of stackwalk on dumps of test/dumps/dotnet/program (StackwalkDotnet), shared by
dotnet_test.py (the committed dumps) and dotnet_fresh_test.py (dumps captured now with the
installed runtime).

A dump is described by an entry of a dumps.json written by test/dumps/dotnet/manifest.py
(committed, or fresh in make-dumps.sh's OUTDIR): its scenario_threads hold the program's own
record of each scenario thread's stack (System.Diagnostics.StackTrace, taken before it
blocked), its crash the crashing thread, its runtime_version the runtime the program ran on.
check_dump holds the walks against that truth; only the ClrMD comparison (committed dumps)
and the capture (fresh dumps) are the callers' own.
"""
import json
import re

import dumps

# The runtime's capital-F Frames on each scenario's thread (.NET 10; test/dumps/dotnet/README.md
# has ClrMD's view), placed by the recorded method they come before (None: after the last):
#   a, c, d, e: Thread.Sleep's QCall is an InlinedCallFrame above the first recorded method;
#   b: the P/Invoke to libc read, inlined into BlockInRead (no IL stub);
#   c: the forward call through the function pointer in CallThroughPointer;
#   d: the throw under the catch funclet (SoftwareExceptionFrame below CatchSite's funclet);
#   f: the unhandled throw;
#   g: the fault's FaultingExceptionFrame, above the faulting method (it holds its context);
#   h: the IL stub's P/Invoke (the stub is not in the record: it runs after the recorder);
#   i: Thread.Sleep's, then the P/Invokes into the runtime of the class constructor's helper
#      (InitHelpers.InitClassSlow) and of reflection's invoke (InterpretedInvoke_Method);
#   j: Thread.Sleep's;
#   started threads end with the DebuggerU2MCatchHandlerFrame of their start (not a, f: the
#   main thread's managed stack ends at Main).
RUNTIME_FRAMES = {
    "a": [(0, "InlinedCallFrame")],
    "b": [(0, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "c": [(0, "InlinedCallFrame"), (2, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "d": [(0, "InlinedCallFrame"), (2, "SoftwareExceptionFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "e": [(0, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "f": [(0, "SoftwareExceptionFrame")],
    "g": [(0, "FaultingExceptionFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "h": [(0, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "i": [(0, "InlinedCallFrame"), (5, "InlinedCallFrame"), (8, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
    "j": [(0, "InlinedCallFrame"), (None, "DebuggerU2MCatchHandlerFrame")],
}


def scenario(record_thread):
    """A scenario_threads entry (as manifest.py writes it) from one thread of the program's
    own record."""
    return {"scenario": record_thread["scenario"], "managed_thread_id": record_thread["managed_thread_id"],
            "expected_managed_frames": [f["name"] for f in record_thread["frames"]],
            "expected_method_descs": [f["method_desc"] for f in record_thread["frames"]]}


# The exceptions the program throws (Program.cs): a scenario thread's last thrown exception.
EXCEPTIONS = {
    "d": ("System.InvalidOperationException", "scenario d"),
    "f": ("System.InvalidOperationException", "stackwalk crash scenario f"),
    "g": ("System.NullReferenceException", "Object reference not set to an instance of an object."),
}
# Their HResults, as .NET defines them (COR_E_INVALIDOPERATION; E_POINTER for a null reference).
HRESULTS = {"System.InvalidOperationException": "0x80131509", "System.NullReferenceException": "0x80004003"}


def expected_exception(dump, scenario):
    """(type, message) of a scenario thread's last thrown exception: ClrMD's, for a thread of a
    dump captured with ClrMD (in a triage dump the message string may be missing: ClrMD then
    says null), else what the program threw."""
    if "clrmd_current_exception" in scenario:
        clrmd = scenario["clrmd_current_exception"]
        return (clrmd["type"], clrmd["message"]) if clrmd else None
    crash = dump.get("crash") or {}
    clrmd = crash.get("clrmd_current_exception")
    if clrmd and str(crash.get("thread")) in dump.get("scenario_threads", {}) and \
            dump["scenario_threads"][str(crash["thread"])] is scenario:
        return clrmd["type"], clrmd["message"]
    return EXCEPTIONS.get(scenario["scenario"])


def walk(stackwalk, args, cwd, *extra):
    """stackwalk ARGS --all-threads --json EXTRA in CWD, its JSON document."""
    result = dumps.run_in(stackwalk, [*args, "--all-threads", "--json", *extra], cwd)
    if result.returncode != 0:
        raise RuntimeError(f"stackwalk {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def bare_name(name):
    """Namespace.Type.Method without parameters, instantiations or generic
    parameter lists, so that ClrMD's, the record's and stackwalk's spellings compare."""
    name = re.sub(r"\(.*\)$", "", name)
    previous = None
    while previous != name:
        previous = name
        name = re.sub(r"\[[^\[\]]*\]", "", name)
    return name


# A DynamicMethod's name is a string the runtime allocated outside the dump kinds that keep
# only stacks and runtime structures (createdump --normal): its frame is then unnamed, with a
# note saying so. It stands for the record's DynamicClass.NAME (ClrMD does not name it either).
NAME_NOT_IN_DUMP = "DynamicClass.(name not in the dump)"


def name_not_in_dump(frame):
    return frame["kind"] == "managed" and not frame["method"] and frame["method_desc"] and \
        "the dynamic method's name" in (frame["note"] or "") and "is not in the dump" in frame["note"]


def same_name(recorded, entry):
    return recorded == entry or (entry == NAME_NOT_IN_DUMP and recorded.startswith("DynamicClass."))


def entry_name(frame):
    """A frame of stackwalk's JSON as the sequences below spell it: a managed frame by its
    bare method name, a runtime Frame as [Name], a native frame as None."""
    if frame["kind"] == "managed":
        return bare_name(frame["method"]) if frame["method"] else NAME_NOT_IN_DUMP if name_not_in_dump(frame) else ""
    if frame["kind"] == "runtime":
        return f"[{frame['frame_name']}]"
    return None


def short(name):
    """Type.Method of a bare name (or a [Frame]), for messages."""
    return ".".join(name.split(".")[-2:])


def in_order(frames, expected):
    """Matches EXPECTED (names as entry_name spells them) in order against FRAMES, each to
    the first frame after the previous match: the matched frames, None for a name not found
    (the next name is looked for after the previous match)."""
    matched, position = [], 0
    for want in expected:
        found = next((i for i in range(position, len(frames)) if same_name(want, entry_name(frames[i]))), None)
        matched.append(None if found is None else frames[found])
        position = position if found is None else found + 1
    return matched


def expected_with_frames(scenario, methods):
    """The record's methods with the scenario's runtime Frames placed among them."""
    out = []
    placed = RUNTIME_FRAMES.get(scenario, [])
    for i in range(len(methods) + 1):
        out += [f"[{name}]" for before, name in placed if before == (i if i < len(methods) else None)]
        if i < len(methods):
            out.append(methods[i])
    return out


def generic(name):
    """Reflection's MethodHandle of a method of a generic type or a generic method, of a
    compiler-generated type (a state machine's MoveNext runs through an instantiating or
    unboxing stub) may differ from the MethodDesc of the running code."""
    return "`" in name or "<" in name


def check_thread(check, label, thread, scenario, walk_kind):
    """One scenario thread of one walk (walk_kind: "mixed" or "managed-only") against the
    record: its methods in order, its runtime Frames among them, the record's MethodDescs."""
    frames = thread["frames"] if thread else []
    methods = [bare_name(m) for m in scenario["expected_managed_frames"]]
    what = f"{label}: scenario {scenario['scenario']} ({walk_kind})"
    matched = in_order(frames, methods)
    check(all(matched), f"{what}: {' < '.join(map(short, methods))} in order")
    expected = expected_with_frames(scenario["scenario"], methods)
    found = in_order(frames, expected)
    places = [f"[{name}] " + (f"after {short(methods[-1])}" if before is None else f"before {short(methods[before])}")
              for before, name in RUNTIME_FRAMES.get(scenario["scenario"], [])]
    missing = [short(e) for e, f in zip(expected, found) if f is None]
    check(all(found), f"{what}: runtime Frames in place: {', '.join(places)}"
          + (f"; not found in order: {', '.join(missing)}" if missing else ""))
    compared, differ = 0, []
    for method, md, frame in zip(methods, scenario.get("expected_method_descs", []), matched):
        if frame is None or generic(method) or md is None:  # None: a DynamicMethod has no MethodHandle
            continue
        compared += 1
        if int(frame["method_desc"] or "0", 16) != int(md, 16):
            differ.append(f"{short(method)}: {frame['method_desc']} != {md}")
    check(compared > 0 and not differ, f"{what}: the MethodDescs of the {compared} recorded non-generic methods"
          + (": " + "; ".join(differ) if differ else ""))


def check_managed_frames(check, label, document, walk_kind):
    """Every managed frame of every thread has a MethodDesc and a name (or a note that the
    dynamic method's name is not in the dump); every runtime Frame a name."""
    unnamed = [f"{t['tid']}#{f['index']}" for t in document["threads"] for f in t["frames"]
               if (f["kind"] == "managed" and not (f["method_desc"] and f["method"]) and not name_not_in_dump(f))
               or (f["kind"] == "runtime" and not f["frame_name"])]
    managed = sum(f["kind"] == "managed" for t in document["threads"] for f in t["frames"])
    check(managed > 0 and not unnamed, f"{label} ({walk_kind}): {managed} managed frames, each with a MethodDesc "
          f"and a name; runtime Frames named" + (": unnamed " + ", ".join(unnamed) if unnamed else ""))


def check_dump(check, label, dump, mixed, managed_only):
    """A dump's mixed-mode walk and its --managed-only walk (stackwalk JSON documents)
    against its dumps.json entry DUMP."""
    for walk_kind, document in (("mixed", mixed), ("managed-only", managed_only)):
        runtime = document["runtimes"][0] if document["runtimes"] else None
        check(runtime is not None and runtime["version"] == dump["runtime_version"],
              f"{label} ({walk_kind}): runtime {dump['runtime_version']} found"
              + ("" if runtime is None else f" (reported {runtime['version']})"))
        check(document["warnings"] == [], f"{label} ({walk_kind}): no warnings"
              + (f": {document['warnings']}" if document["warnings"] else ""))
        check_managed_frames(check, label, document, walk_kind)
        by_tid = {t["tid"]: t for t in document["threads"]}
        for tid, scenario in dump.get("scenario_threads", {}).items():
            thread = by_tid.get(int(tid))
            check(thread is not None and thread["managed_thread_id"] == scenario["managed_thread_id"],
                  f"{label} ({walk_kind}): scenario {scenario['scenario']} is thread {tid}, "
                  f"managed thread {scenario['managed_thread_id']}")
            check_thread(check, label, thread, scenario, walk_kind)
            thrown = thread and thread["last_thrown_exception"]
            got = thrown and (thrown["type"], thrown["message"])
            want = expected_exception(dump, scenario)
            if want and want[1] is None and not thrown["note"]:
                got = None  # a message that is not in the dump: a note must say why
            check(got == want, f"{label} ({walk_kind}): scenario {scenario['scenario']}: last thrown exception "
                  + (f"{want[0]} \"{want[1]}\"" if want else "none") + ("" if got == want else f" (got {got})"))
            if walk_kind == "mixed":
                # Managed frames sit between named native frames.
                frames = thread["frames"] if thread else []
                kinds = [f["kind"] for f in frames]
                if "managed" in kinds:
                    first, last = kinds.index("managed"), len(kinds) - 1 - kinds[::-1].index("managed")
                    natives = [f for f in frames[:first] + frames[last + 1:] if f["kind"] == "native"]
                    check(bool(natives) and all(f["module"] for f in natives),
                          f"{label}: scenario {scenario['scenario']}: the native frames around the "
                          "managed ones have modules")
                # Every transition of these scenarios has unwind info on both sides, so no
                # managed frame needs a runtime Frame's saved context to be reached.
                carried = [f"#{f['index']}" for f in frames if f["kind"] == "managed" and f["trust"] == "runtime_frame"]
                check(not carried, f"{label}: scenario {scenario['scenario']}: every managed frame reached by "
                      "unwinding" + (f" (through a Frame: {', '.join(carried)})" if carried else ""))
    if dump.get("crash"):
        crashed = [t["tid"] for t in mixed["threads"] if t["crashed"]]
        check(crashed == [dump["crash"]["thread"]] and (mixed["crash"] or {}).get("thread_id") == crashed[0],
              f"{label}: the crashing thread is {dump['crash']['thread']} (stackwalk: {crashed})")
        recorded = dump["crash"].get("runtime_crash_thread")
        if recorded is not None:
            check(crashed == [recorded], f"{label}: the crashing thread is the runtime's record of it "
                  f"(createdump: 'Crashing thread {recorded:x}'; stackwalk: {crashed})")
        thread = next((t for t in mixed["threads"] if t["crashed"]), {})
        thrown = thread.get("last_thrown_exception") or {}
        exception = dump["crash"]["exception"]
        clrmd_exception = dump["crash"].get("clrmd_current_exception")
        check(thrown.get("type") == exception and thrown.get("hresult") == HRESULTS[exception]
              and (not clrmd_exception or int(thrown["object"], 16) == int(clrmd_exception["address"], 16)),
              f"{label}: the unhandled exception's type, HResult {HRESULTS[exception]}"
              + (" and object (ClrMD's)" if clrmd_exception else "") + f" (got {thrown or None})")
        clrmd = dump["crash"].get("clrmd_first_managed_frame")
        if clrmd:  # captured with ClrMD: its first managed frame of the crashing thread
            for walk_kind, document in (("mixed", mixed), ("managed-only", managed_only)):
                thread = next((t for t in document["threads"] if t["crashed"]), {"frames": []})
                first = next((f for f in thread["frames"] if f["kind"] == "managed"), None)
                got = first and (bare_name(first["method"]), int(first["method_desc"], 16))
                want = (clrmd["method"], int(clrmd["method_desc"], 16))
                check(got == want, f"{label} ({walk_kind}): the crashing thread's first managed frame is ClrMD's: "
                      f"{want[0]} {hex(want[1])}" + ("" if got == want else f" (got {got})"))
        # An unhandled exception's signature starts at the method that threw it, past the
        # runtime's dispatch and crash-dump frames, which every .NET crash shares.
        scenario = dump["scenario_threads"][str(dump["crash"]["thread"])]
        methods = [bare_name(m) for m in scenario["expected_managed_frames"]][:5]
        want = " < ".join(assembly_of(m) + "!" + m for m in methods)
        got = " < ".join((mixed["signature"] or "").split(" < ")[:len(methods)])
        check(got == want, f"{label}: the crash signature starts with the throwing methods: {want}"
              + ("" if got == want else f" (got {mixed['signature']})"))


def assembly_of(method):
    """The assembly of a recorded method: the program's, or CoreLib's (System.*)."""
    return "System.Private.CoreLib.dll" if method.startswith("System.") else "StackwalkDotnet.dll"


def check_runtime_info(check, label, stackwalk, args, cwd, dump):
    """--runtime-info: the runtime's version, and every scenario thread in its thread list
    with the managed thread id the program recorded."""
    result = dumps.run_in(stackwalk, [*args, "--runtime-info", "--json"], cwd)
    if result.returncode != 0:
        check(False, f"{label}: --runtime-info exited {result.returncode}: {result.stderr.strip()}")
        return None
    info = json.loads(result.stdout)["runtime"]
    check(info["version"] == dump["runtime_version"],
          f"{label}: --runtime-info reports .NET {info['version']}, the program ran on {dump['runtime_version']}")
    threads = {t["os_id"]: t["managed_id"] for t in info["threads"]}
    missing = [tid for tid, s in dump.get("scenario_threads", {}).items()
               if threads.get(int(tid)) != s["managed_thread_id"]]
    check(not missing, f"{label}: --runtime-info lists {len(threads)} managed threads, the scenario threads "
          "with their managed ids" + (f" (not: {missing})" if missing else ""))
    return info


# ClrMD (the runtime's own DAC) as the oracle of --managed-only: every thread's managed frames
# (MethodDesc, stack and instruction pointers, ClrMD's signature as the name) and runtime Frames
# (name, address, the method an InlinedCallFrame calls), and its last thrown exception.
def clrmd_entries(thread):
    out = []
    for f in thread["frames"]:
        if f["kind"] == "Runtime":
            entry = ("runtime", f["frame_name"], int(f["sp"], 16), f.get("signature"))
            if out and out[-1] == entry:
                continue
        else:
            md = int(f["method_desc"], 16) if f.get("method_desc") else None
            entry = ("managed", md, int(f["sp"], 16), int(f["ip"], 16), f.get("signature"))
        out.append(entry)
    return out


def our_entries(thread):
    out = []
    for f in thread["frames"]:
        if f["kind"] == "runtime":
            out.append(("runtime", f["frame_name"], int(f["frame_address"], 16), f["method"]))
        else:
            md = int(f["method_desc"], 16) if f["method_desc"] else None
            name = NAME_NOT_IN_DUMP if name_not_in_dump(f) else f["method"]
            out.append(("managed", md, int(f["sp"], 16), int(f["ip"], 16), name))
    return out


def exception_chain(exception, clrmd_shape):
    """(object, type, message[, hresult]) of an exception and of each inner one, ClrMD's
    JSON (clrmd_shape) or stackwalk's. The committed oracle files predate ClrMD's HResult
    and inner exceptions: without them only the outermost object, type and message compare."""
    chain = []
    while exception:
        address = exception["address"] if clrmd_shape else exception["object"]
        entry = (int(address, 16), exception["type"], exception["message"])
        chain.append(entry + ((exception["hresult"],) if "hresult" in exception else ()))
        exception = exception.get("inner")
    return chain


def check_exception(check, name, tid, ours, clrmd):
    """The thread's last thrown exception against ClrMD's ClrThread.CurrentException (the
    same handle): object, type, message, HResult and inner exceptions; none where ClrMD has none."""
    if clrmd is None:
        check(ours is None, f"{name}: thread {tid}: no exception, as ClrMD" + (f" (ours: {ours})" if ours else ""))
        return
    want = exception_chain(clrmd, True)
    got = exception_chain(ours, False) if ours else []
    if "hresult" not in clrmd:
        want, got = want[:1], [entry[:3] for entry in got[:1]]
    check(got == want, f"{name}: thread {tid}: last thrown exception {want[0][1]} \"{want[0][2]}\" at "
          f"{hex(want[0][0])} and {len(want) - 1} inner, as ClrMD" + ("" if got == want else f" (ours: {got})"))


def same_entry(clrmd, ours):
    """One entry of each walk alike. ClrMD 4.1 lists a DynamicMethod's frame (a compiled
    expression) with neither MethodDesc nor name, where stackwalk names it as the runtime does
    (DynamicClass.lambda_method1(...)): such a frame compares by its stack and instruction
    pointers, and stackwalk's name must be a DynamicClass one (the record checks which)."""
    if clrmd[0] == "managed" and clrmd[1] is None and clrmd[4] is None:
        return ours[0] == "managed" and ours[2:4] == clrmd[2:4] and (ours[4] or "").startswith("DynamicClass.")
    return clrmd == ours


def check_against_clrmd(check, name, ours, oracle):
    by_tid = {t["tid"]: t for t in ours["threads"]}
    managed_frames = runtime_frames = 0
    for thread in oracle["threads"]:
        tid = thread["os_thread_id"]
        mine = by_tid.get(tid)
        if mine is None:
            check(False, f"{name}: thread {tid} is in the dump")
            continue
        check(mine["managed_thread_id"] == thread["managed_thread_id"],
              f"{name}: thread {tid} is managed thread {thread['managed_thread_id']}")
        expected, got = clrmd_entries(thread), our_entries(mine)
        same = len(expected) == len(got) and all(map(same_entry, expected, got))
        check(same, f"{name}: thread {tid}: {len(expected)} entries equal to ClrMD's")
        if not same:
            for i in range(max(len(expected), len(got))):
                e = expected[i] if i < len(expected) else None
                g = got[i] if i < len(got) else None
                print(f"     {'  ' if e == g else '!='} clrmd {e}\n        ours  {g}")
        check_exception(check, name, tid, mine["last_thrown_exception"], thread.get("current_exception"))
        managed_frames += sum(1 for e in expected if e[0] == "managed")
        runtime_frames += sum(1 for e in expected if e[0] == "runtime")
    print(f"     {name}: {managed_frames} managed frames and {runtime_frames} runtime Frames compared with ClrMD")
