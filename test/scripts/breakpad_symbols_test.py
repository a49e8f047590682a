#!/usr/bin/env python3
"""The project's cores as minidumps walked with Breakpad .sym files only, against
Breakpad's own minidump_stackwalk with the same files and against gdb on the cores.

Usage: breakpad_symbols_test.py STACKWALK UNPACKED_DUMPS_DIR

Breakpad's prebuilt dump_syms and minidump_stackwalk come from the npm package
`minidump` (0.26.0: `npm pack`, unpacked, never installed), cached beside
STACKWALK in breakpad/. Each core becomes a minidump (core_to_minidump.py:
threads, stacks, modules; no code bytes), each module file a .sym in a store
in Breakpad's layout (dump_syms -d, with INLINE records, and the file's separate
debug file), and stackwalk walks the minidump with --symbols-path and
--no-host-files: no module file at all. Per thread, its frames, inlined ones
included, must be Breakpad's (module, function, source file, line) and gdb's
(the committed oracle's instruction pointers, tail-call frames aside: a .sym
file has no call-site records). A program built here with DWARF 4 (for which
dump_syms writes INLINE records; the committed cores' DWARF 5 gives few) adds
inlined calls at a crash and at a return address. Breakpad walks
on past `_start` (a .sym cannot say its return address is undefined) and past
the last frame of some threads by scanning, and misses a frame gdb finds
(crash-callnull's caller of the null call): those frames are listed, not
required. The same minidumps walked with no symbols at all give only frames gdb
finds, and with each program's .sym rewritten as for a build without -g or
unwind tables (PUBLIC records only) frames gdb finds but listed stale ones. The JIT programs' minidumps (no mapping recorded: nothing says the JIT
code is code) give, from the first JIT frame on, the return addresses the
programs recorded themselves. Skips when the tools cannot be had.
"""
import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

import core_to_minidump
import cross_arch
import dumps

NPM_PACKAGE = "minidump@0.26.0"
# Cores whose threads gdb gets wrong, or whose frames need what a .sym file
# and a stack-only minidump cannot give: code registered at run time, a
# smashed stack, a stack the minidump does not hold. (x86-64 glibc's signal
# trampoline, __restore_rt, is libc's: its .sym's STACK CFI crosses it.)
LEFT_OUT = {
    "jit-gdb": "JIT code registered at run time is in no module file",
    "jit-libunwind": "JIT code registered at run time is in no module file",
    "smashed-stack": "gdb's frames are wrong by the program's own record",
}
# Threads in a signal handler on their alternate signal stack: the minidump holds
# the stack their stack pointer is in, as Breakpad's writer records it, not the
# thread's own stack, where the interrupted frames lie. Their frames must be the
# first of gdb's, up to the frame that the handler's signal frame restores.
ON_ALTERNATE_STACK = {("sighandler", 26146)}


def breakpad_tools(cache):
    """(dump_syms, minidump_stackwalk), fetched once into `cache`; None when they cannot be had.
    Five tests ask for them, and ctest runs two at a time: the first fetches and unpacks under a
    lock while the other waits, rather than running a half-written tool."""
    tools = os.path.join(cache, "package", "bin", "linux-x64")
    wanted = (os.path.join(tools, "dump_syms"), os.path.join(tools, "minidump_stackwalk"))
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(os.access(t, os.X_OK) for t in wanted):
            return wanted
        return fetch_breakpad_tools(cache, wanted)


def fetch_breakpad_tools(cache, wanted):
    try:
        packed = subprocess.run(["npm", "pack", NPM_PACKAGE], cwd=cache, capture_output=True, text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if packed.returncode != 0:
        return None
    with tarfile.open(os.path.join(cache, packed.stdout.strip().splitlines()[-1])) as tar:
        tar.extractall(cache, filter="data")
    return wanted if all(os.access(t, os.X_OK) for t in wanted) else None


def build_id_hex(path):
    ident = core_to_minidump.build_id(path)
    return ident.hex() if ident else None


def make_symbols(dump_syms, module_file, debug_root, store, made):
    """The module file's .sym in the store, with its separate debug file's DWARF
    (found under debug_root's .build-id/, as in /usr/lib/debug)."""
    if module_file in made:
        return
    made.add(module_file)
    ident = build_id_hex(module_file)
    # Debian's debug links name the file under .build-id/xx/, where dump_syms looks for it.
    debug_dir = os.path.join(debug_root, ".build-id", ident[:2]) if ident else ""
    # Other debug files lie beside their programs (bin/NAME.debug). dump_syms
    # fails when given directories without the file a debug link names: then
    # the file alone (its symbol table and .eh_frame).
    debug_dirs = [d for d in (debug_dir, os.path.dirname(module_file)) if os.path.isdir(d)]
    for dirs in (debug_dirs, []):
        result = subprocess.run([dump_syms, "-d", module_file] + dirs, capture_output=True, timeout=300)
        header = result.stdout.split(b"\n", 1)[0].decode(errors="replace").split(" ")
        if result.returncode == 0 and len(header) == 5 and header[0] == "MODULE":
            break
    else:
        return
    # Filed under the name the dump records (the mapped file's), as a symbol
    # upload for this dump would; dump_syms's MODULE record may give the soname.
    name = os.path.basename(module_file)
    folder = os.path.join(store, name, header[3])
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".sym"), "wb") as f:
        f.write(result.stdout)


def normalized(path):
    return os.path.normpath(path) if path else None


def breakpad_frames(minidump_stackwalk, dump, store):
    """{thread index: [(module, function, file, line)]} from minidump_stackwalk -m."""
    out = subprocess.run([minidump_stackwalk, "-m", dump, store], capture_output=True, text=True, timeout=300).stdout
    threads = {}
    for line in out.splitlines():
        fields = line.split("|")
        if len(fields) != 7 or not fields[0].isdigit():
            continue
        thread, _, module, function, file, number, _ = fields
        threads.setdefault(int(thread), []).append(
            (module or None, function or None, normalized(file), int(number) if number else None))
    return threads


def our_frames(thread, inlined=False):
    return [(f["module"], f["function"], normalized(f["file"]), f["line"])
            for f in thread["frames"] if (inlined or not f["inlined"]) and not f["tail_call"]]


def align(mine, breakpad):
    """Breakpad's frames matched to ours in order: (ours it lacks, its frames past ours).
    Each of ours is checked against gdb on its own; a frame of ours that
    reappears past the alignment means Breakpad has one we lack before it."""
    matched, lacking = 0, []
    for frame in mine:
        if matched < len(breakpad) and breakpad[matched] == frame:
            matched += 1
        else:
            lacking.append(frame)
    return lacking, breakpad[matched:]


def gdb_frames(dump):
    """{tid: gdb's physical frames}, tail-call frames left out."""
    with open(os.path.join(dumps.SOURCE, dump["oracle"])) as f, \
         open(os.path.join(dumps.SOURCE, dump["oracle_frame_kinds"])) as k:
        oracle = dumps.with_tail_calls_marked(json.load(f), json.load(k))
    return {t["tid"]: [fr for fr in t["frames"] if not fr["inlined"] and not fr.get("tailcall")]
            for t in oracle["threads"]}


def pcs_of(frames_by_tid):
    return {tid: [int(fr["pc"], 16) for fr in frames] for tid, frames in frames_by_tid.items()}


def gdb_pcs(unpacked, dump):
    return pcs_of(gdb_frames(dump))


class NamedByPublicBefore:
    """In place of a function name stackwalk leaves out: a return address in
    code a STACK CFI range of another function covers, past the PUBLIC symbol
    before it, where the truth (gdb, or a walk with the module files, reading
    their symbol tables) names no function either (a static function of a
    library whose .sym has only its exported symbols). Breakpad names it by
    that PUBLIC symbol; equal to any name."""

    def __eq__(self, other):
        return True

    def __repr__(self):
        return "(named by the PUBLIC symbol before it)"


def unnamed_as_truth(thread, unnamed):
    """Our frames (inlined ones too), each unnamed physical frame whose pc is
    one the truth leaves unnamed (`unnamed`) marked NamedByPublicBefore."""
    return [(f["module"], NamedByPublicBefore() if f["function"] is None and int(f["ip"], 16) in unnamed
             and not f["inlined"] else f["function"], normalized(f["file"]), f["line"])
            for f in thread["frames"] if not f["tail_call"]]


def minidump_with_symbols(dump_syms, core_path, minidump, roots, debug_root, store, made):
    """The core written as a minidump, its modules' files (found under `roots`) made
    into .sym files in the store, with their debug files under debug_root."""
    core_to_minidump.write(core_path, minidump, roots)
    for _, _, path, _ in core_to_minidump.modules(core_to_minidump.Core(core_path), roots):
        if local := core_to_minidump.local_file(roots, path):
            make_symbols(dump_syms, local, debug_root, store, made)


def as_minidump(tools, unpacked, dump, store, made, tmp):
    """The dump's core written as a minidump in tmp, its modules' .sym files in the store."""
    minidump = os.path.join(tmp, dump["name"] + ".dmp")
    roots = [os.path.join(unpacked, "sysroot"), os.path.join(unpacked, "bin")]
    minidump_with_symbols(tools[0], os.path.join(unpacked, dump["core"]), minidump, roots,
                          os.path.join(unpacked, "sysroot", "usr", "lib", "debug"), store, made)
    return minidump


def check_dump(check, stackwalk, tools, unpacked, dump, store, made, tmp, walked):
    name = dump["name"]
    minidump = as_minidump(tools, unpacked, dump, store, made, tmp)
    result = subprocess.run([stackwalk, minidump, "-a", "--json", "--symbols-path", store, "--no-host-files"],
                            capture_output=True, text=True, timeout=120, cwd=tmp)
    if result.returncode != 0:
        check(False, f"{name}: stackwalk exited {result.returncode}: {result.stderr.strip()}")
        return
    walked[minidump] = result.stdout
    ours = json.loads(result.stdout)
    check(all(m["symbols"] == "breakpad" and m["file"] is None for m in ours["modules"]),
          f"{name}: every module named by its .sym file alone")
    theirs = breakpad_frames(tools[1], minidump, store)
    gdb = gdb_frames(dump)
    pcs = pcs_of(gdb)
    extra = inlined = unnamed = 0
    for index, thread in enumerate(ours["threads"]):
        unnamed_by_gdb = {int(fr["pc"], 16) for fr in gdb.get(thread["tid"], []) if not fr.get("function")}
        mine, breakpad = unnamed_as_truth(thread, unnamed_by_gdb), theirs.get(index, [])
        lacking, past = align(mine, breakpad)
        extra += len(past)
        inlined += sum(f["inlined"] for f in thread["frames"])
        if not lacking:  # ours are Breakpad's first frames, one for one
            unnamed += sum(isinstance(f[1], NamedByPublicBefore) and b[1] is not None for f, b in zip(mine, breakpad))
        agrees = not any(frame in lacking for frame in past)
        check(agrees, f"{name} thread {thread['tid']}: {len(mine)} frames as Breakpad's with the same .sym files"
                      + (f" (Breakpad lacks {lacking}, which gdb has)" if lacking else "")
                      + ("" if agrees else f"\n       ours {mine}\n       breakpad {breakpad}"))
        ips = [int(f["ip"], 16) for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]
        truth, what = pcs.get(thread["tid"], []), "the instruction pointers gdb finds on the core"
        if (name, thread["tid"]) in ON_ALTERNATE_STACK:
            names = [fr.get("function") for fr in gdb.get(thread["tid"], [])]
            truth = truth[:len(names) - names[::-1].index("__restore_rt") + 1]
            what = "gdb's instruction pointers to the frame the last signal frame restores"
        check(ips == truth, f"{name} thread {thread['tid']}: {what}"
              + ("" if ips == truth else f" (ours {[hex(i) for i in ips]}, gdb {[hex(i) for i in truth]})"))
    print(f"     {name}: {inlined} inlined frame(s) among those; Breakpad walked {extra} frame(s) past where "
          f"stackwalk and gdb stop; {unnamed} frame(s) Breakpad names by the PUBLIC symbol before them, "
          f"unnamed as gdb leaves them")
    bare = check_without_symbols(check, stackwalk, minidump, name, pcs, tmp)
    total, false = breakpad_false_frames(tools[1], minidump, bare, pcs)
    print(f"     {name} without symbols: Breakpad gives {total} frames, {false} of them not gdb's")


def not_in_order(ips, truth):
    """The ips that are not the truth's in its order (truth's others may lie between)."""
    missing, at = [], 0
    for ip in ips:
        if ip in truth[at:]:
            at = truth.index(ip, at) + 1
        else:
            missing.append(ip)
    return missing


def check_without_symbols(check, stackwalk, minidump, name, pcs, tmp):
    """No file, no .sym and no code bytes: frame-pointer chains and nothing the scan
    cannot prove; every frame printed is one gdb finds, in gdb's order."""
    result = subprocess.run([stackwalk, minidump, "-a", "--json", "--no-host-files"], capture_output=True, text=True,
                            timeout=120, cwd=tmp)
    report = json.loads(result.stdout)
    false_frames, frames = [], 0
    for thread in report["threads"]:
        ips = [int(f["ip"], 16) for f in thread["frames"]]
        frames += len(ips)
        false_frames += [hex(ip) for ip in not_in_order(ips, pcs.get(thread["tid"], []))]
    check(result.returncode == 0 and not false_frames,
          f"{name} without symbols: {frames} frames, each one gdb finds, in its order ({false_frames or 'none false'})")
    return report


def breakpad_false_frames(minidump_stackwalk, minidump, report, pcs):
    """(frames, frames gdb does not find) of Breakpad's walk without symbols."""
    # A Windows module's path has backslashes; Breakpad names it by its last part.
    bases = {re.split(r"[\\/]", m["path"])[-1]: int(m["base"], 16) for m in report["modules"]}
    out = subprocess.run([minidump_stackwalk, "-m", minidump], capture_output=True, text=True, timeout=300).stdout
    total, false = 0, 0
    for line in out.splitlines():
        fields = line.split("|")
        if len(fields) != 7 or not fields[0].isdigit() or int(fields[0]) >= len(report["threads"]):
            continue
        module, offset = fields[2], int(fields[6], 16)
        ip = bases[module] + offset if module else offset
        total += 1
        false += ip not in pcs.get(report["threads"][int(fields[0])]["tid"], [])
    return total, false


# Frames of the Windows dumps walked without images that are real return
# addresses, following a call in code the dump holds, but stale: left on the
# stack by a call that has returned. Without .pdata nothing tells them from a
# caller; listed here, each to go when something can.
KNOWN_STALE = {
    # atexit's return from _onexit, 101 words above the main thread's context
    # in ntdll (crash-av.exe+0x14f9: call _onexit at +0x14f4), left by the
    # CRT's start-up below mainCRTStartup's frame.
    ("crash-av", 0x1400014f9),
}


# A stale return address the scan takes above a JIT frame whose code nothing
# describes in a minidump (its libunwind registration lies in heap memory the
# minidump lacks): explicit_bzero's, from before the thread called the JIT code.
KNOWN_STALE_ABOVE_JIT = {("jit-libunwind", 25747, 0x7ffff7e52c7e)}


def jit_threads(check, stackwalk, tools, unpacked, store, made, tmp):
    """The JIT programs' cores as minidumps with .sym files: such a dump records
    no mapping, so nothing says the JIT code is code; the unwind data of the
    frame below it, and frame records that lead back into a module, find its
    frames. From the first JIT frame on, each JIT thread's frames must be the
    program's own record of its return addresses, in order (a JIT frame that
    keeps no frame pointer may be passed over), but the listed stale one."""
    for dump in dumps.manifest():
        if "expected_return_addresses" not in dump or "jit_mapping" not in dump:
            continue
        minidump = as_minidump(tools, unpacked, dump, store, made, tmp)
        report = json.loads(subprocess.run([stackwalk, minidump, "-a", "--json", "--symbols-path", store,
                                            "--no-host-files"], capture_output=True, text=True, timeout=120).stdout)
        for thread in report["threads"]:
            record = [int(a, 16) for a in dump["expected_return_addresses"].get(str(thread["tid"]), [])]
            if not record:
                continue
            ips = [int(f["ip"], 16) for f in thread["frames"] if not f["inlined"]]
            past = ips[ips.index(record[0]):] if record[0] in ips else []
            stale = {ip for name, tid, ip in KNOWN_STALE_ABOVE_JIT if (name, tid) == (dump["name"], thread["tid"])}
            false = [hex(ip) for ip in not_in_order(past, record) if ip not in stale]
            check(past and past[-1] == record[-1] and not false,
                  f"{dump['name']} thread {thread['tid']} as a minidump: from its first JIT frame on, "
                  f"{sum(ip in record for ip in past)} of the {len(record)} return addresses it recorded itself"
                  + (f" (reached: {[hex(ip) for ip in ips]})" if not past else "")
                  + (f" (not in it: {false})" if false else ""))


def windows_without_images(check, stackwalk, tools, unpacked):
    """The project's Windows x64 dumps (winedbg's, test/dumps/windows) with no
    module file and no symbols: .pdata is in the images, the dumps hold no code,
    so nothing can show that a word on the stack follows a call. stackwalk's
    frames must all be winedbg's, in its order; Breakpad's walk of the same
    dumps, whose scan takes any word inside a module, is counted against them.
    This is why stackwalk walks Breakpad's and rust-minidump's Windows x64 dumps
    without their images no further than their context frames (with a symbol
    server that has the images, symbol_server_test walks these dumps as with
    the files on disk)."""
    root = os.path.join(unpacked, "windows")
    ours = theirs = theirs_false = 0
    false_frames, stale = [], []
    for dump in dumps.manifest("windows"):
        with open(os.path.join(dumps.SOURCE, "windows", dump["oracle"])) as f:
            truth = {t["tid"]: [int(fr["pc"], 16) for fr in t["frames"]] for t in json.load(f)["threads"]}
        minidump = os.path.join(root, dump["dump"])
        result = subprocess.run([stackwalk, minidump, "-a", "--json", "--no-host-files"], capture_output=True,
                                text=True, timeout=120)
        report = json.loads(result.stdout)
        for thread in report["threads"]:
            if thread["tid"] not in truth:
                continue  # winedbg's own thread
            ips = [int(f["ip"], 16) for f in thread["frames"]]
            ours += len(ips)
            for ip in not_in_order(ips, truth[thread["tid"]]):
                known = (dump["name"], ip) in KNOWN_STALE
                (stale if known else false_frames).append(f"{dump['name']} {hex(ip)}")
        total, false = breakpad_false_frames(tools[1], minidump, report, truth)
        theirs, theirs_false = theirs + total, theirs_false + false
    check(not false_frames, f"Windows x64 dumps without images: {ours} frames, each winedbg's, in its order, "
                            f"but the {len(stale)} listed stale return address(es)"
                            + (f" (not: {false_frames})" if false_frames else ""))
    print(f"     Windows x64 dumps without images: Breakpad gives {theirs} frames, {theirs_false} of them not "
          f"winedbg's")


def without_provenance(report):
    """A report without what says where its symbol files came from."""
    data = json.loads(report)
    for module in data["modules"]:
        module["symbol_file"] = module["note"] = None
    return data


def served(check, stackwalk, store, walked, tmp):
    """The same store over HTTP (--symbol-server): the same reports, and a
    second walk of every minidump asks the server nothing (its log)."""
    with dumps.HttpServer(store, os.path.join(tmp, "http.log")) as server:
        args = ["-a", "--json", "--no-host-files", "--symbol-server", server.url,
                "--symbol-cache", os.path.join(tmp, "cache")]
        same, asked = 0, 0
        for attempt in ("first", "second"):
            for minidump, expected in walked.items():
                result = subprocess.run([stackwalk, minidump, *args], capture_output=True, text=True, timeout=120)
                same += result.returncode == 0 and without_provenance(result.stdout) == without_provenance(expected)
            if attempt == "first":
                asked = server.requests()
        check(same == 2 * len(walked), f"--symbol-server: the {len(walked)} reports of --symbols-path, twice ({same})")
        check(server.requests() == asked and asked > 0,
              f"--symbol-server: the second walks ask the server nothing ({asked} requests the first time)")
    # The second walks read each .sym file's index from the cache (SymbolIndexCache).
    count = lambda root, suffix: sum(f.endswith(suffix) for _, _, files in os.walk(root) for f in files)
    indexes, files = count(os.path.join(tmp, "cache", ".symindex"), ".index"), count(store, ".sym")
    check(indexes == files > 0, f"--symbol-cache: an index kept for each of the {files} .sym files ({indexes})")


# gdb's frames of a core, inlined ones included: pc, whether inlined, name, file, line.
GDB_FRAMES = """
frame = gdb.newest_frame()
while frame is not None:
    sal = frame.find_sal()
    print("FRAME", hex(frame.pc()), int(frame.type() == gdb.INLINE_FRAME), frame.name(),
          sal.symtab.filename if sal.symtab else "-", sal.line)
    frame = frame.older()
"""


def gdb_inline_frames(core, exe, tmp):
    """[(pc, inlined, function, file, line)] of the core's crashed thread, as gdb walks it with the program."""
    script = os.path.join(tmp, "inline-frames.py")
    with open(script, "w") as f:
        f.write(GDB_FRAMES)
    out = subprocess.run(["gdb", "-q", "-nx", "-batch", "-ex", "set debuginfod enabled off",
                          "-ex", "set backtrace past-main on", "-x", script, exe, core],
                         capture_output=True, text=True, timeout=120).stdout
    frames = []
    for line in out.splitlines():
        if line.startswith("FRAME "):
            _, pc, inlined, name, file, number = line.split(" ")
            frames.append((int(pc, 16), inlined == "1", name, os.path.basename(file), int(number) or None))
    return frames


def inline_frames(check, stackwalk, tools, tmp):
    """A program with inlined calls in its crashing frame and at a return
    address (test/dumps/inlines/inlines.c), built with DWARF 4 so that dump_syms
    writes INLINE records, crashed by the kernel and made a minidump: with only
    .sym files, every frame, inlined ones included, must be Breakpad's (module,
    function, file, line), and gdb's on the core with the program (pc, inlined
    or not, and the program's names and lines)."""
    if not shutil.which("gcc") or not shutil.which("gdb"):
        print("     inlines: left out (gcc or gdb missing)")
        return
    workdir = os.path.join(tmp, "inlines")
    os.makedirs(workdir)
    exe = os.path.join(tmp, "inlines-program")
    subprocess.run(["gcc", "-O2", "-gdwarf-4", os.path.join(dumps.SOURCE, "inlines", "inlines.c"), "-o", exe],
                   check=True)
    core, _ = cross_arch.capture_core(cross_arch.NATIVE, exe, "crash", workdir,
                                      lambda f: f == "core" or f.startswith("core."))
    minidump, store, made = os.path.join(tmp, "inlines.dmp"), os.path.join(tmp, "inline-symbols"), set()
    core_to_minidump.write(core, minidump, ["/"])
    for _, _, path, _ in core_to_minidump.modules(core_to_minidump.Core(core), ["/"]):
        make_symbols(tools[0], core_to_minidump.local_file(["/"], path), "/usr/lib/debug", store, made)
    result = subprocess.run([stackwalk, minidump, "--json", "--symbols-path", store, "--no-host-files"],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        check(False, f"inlines: stackwalk exited {result.returncode}: {result.stderr.strip()}")
        return
    thread = next(t for t in json.loads(result.stdout)["threads"] if t["crashed"])
    mine = our_frames(thread, inlined=True)
    inlined = sum(f["inlined"] for f in thread["frames"])
    lacking, _ = align(mine, breakpad_frames(tools[1], minidump, store).get(0, []))
    check(inlined >= 3 and not lacking, f"inlines: {len(mine)} frames ({inlined} inlined) as Breakpad's with the "
                                        f"same .sym files" + (f" (Breakpad lacks {lacking})" if lacking else ""))
    # Names and lines are compared in the program's frames; libc's debug file may be absent here.
    program = os.path.basename(exe)
    frames = [f for f in thread["frames"] if not f["tail_call"]]
    own = [f["module"] == program for f in frames]
    ours = [(int(f["ip"], 16), f["inlined"], *((f["function"], os.path.basename(f["file"] or "-"), f["line"])
                                               if mine else (None, None, None)))
            for f, mine in zip(frames, own)]
    gdbs = [(pc, inl, *(rest if i < len(own) and own[i] else (None, None, None)))
            for i, (pc, inl, *rest) in enumerate(gdb_inline_frames(core, exe, tmp))]
    check(ours == gdbs, f"inlines: the frames gdb finds on the core (pc, inlined, the program's names and lines)"
                        + ("" if ours == gdbs else f"\n       ours {ours}\n       gdb  {gdbs}"))


def public_only(sym_text):
    """A program's .sym as dump_syms writes it for the program built without
    -g and without unwind tables: its functions as PUBLIC records, no lines or
    inline records, and only _start's STACK CFI (crt1's own .eh_frame)."""
    out, starts, keep = [], set(), False
    for line in sym_text.splitlines():
        fields = line.split(" ")
        if fields[0] == "FUNC":
            rest = fields[1:]
            multiple = rest[:1] == ["m"]
            address, _, parameters, *name = rest[1:] if multiple else rest
            out.append(" ".join(["PUBLIC"] + (["m"] if multiple else []) + [address, parameters] + name))
        elif fields[0] == "PUBLIC" and fields[-1] == "_start":
            starts.add(fields[-3])
            out.append(line)
        elif fields[0] in ("MODULE", "INFO", "PUBLIC"):
            out.append(line)
        elif line.startswith("STACK CFI INIT "):
            keep = fields[3] in starts
            if keep:
                out.append(line)
        elif line.startswith("STACK CFI ") and keep:
            out.append(line)
    return "\n".join(out) + "\n"


# Stale return addresses the scan takes when a program's functions have no
# unwind records: words in main's frame area left by calls that have returned
# (each follows a call), within the scan's window above main_collect's frame,
# below main's return address. Nothing but the program's unwind data tells them
# from callers; each to go when something can.
KNOWN_STALE_PUBLIC_ONLY = {
    ("debugframe-only", 0x55555555559f),  # sw_thread+0x4f, after its call of pthread_attr_destroy
    ("debugframe-only", 0x7ffff7e6f136),  # __libc_mallopt+0x36 (libc's FUNC record), after a call
    # Left by ld.so's lazy binding of a function the signal handler called first
    # (its PLT's _dl_runtime_resolve); check_match's STACK CFI, read from the
    # stale slot, gives the return address 0, which an outermost frame's may be.
    ("sighandler", 0x7ffff7fd2cf4),  # check_match+0x134, after its call of strcmp
    ("sighandler", 0x7ffff7fd3a98),  # _dl_lookup_symbol_x+0x128, after its call of do_lookup_x
}


def public_only_programs(check, stackwalk, unpacked, store, walked, tmp):
    """Each program's .sym rewritten as for a build without debug info or
    unwind tables (public_only): its frames then come from the scan, with a
    PUBLIC symbol's code, up to the next record, as the evidence. Every frame
    must be one gdb finds on the core, in its order, but the listed stale
    ones; how many of gdb's the walk reaches is printed."""
    sparse = os.path.join(tmp, "public-only")
    shutil.copytree(store, sparse, dirs_exist_ok=True)
    reached = total = 0
    for dump in dumps.manifest():
        minidump = os.path.join(tmp, dump["name"] + ".dmp")
        if minidump not in walked:
            continue
        program = os.path.basename(dump["executable"])
        for sym in glob.glob(os.path.join(sparse, program, "*", program + ".sym")):
            with open(sym, encoding="utf-8", errors="replace") as f:
                text = public_only(f.read())
            with open(sym, "w", encoding="utf-8") as f:
                f.write(text)
        result = subprocess.run([stackwalk, minidump, "-a", "--json", "--symbols-path", sparse, "--no-host-files"],
                                capture_output=True, text=True, timeout=120, cwd=tmp)
        pcs = gdb_pcs(unpacked, dump)
        false_frames = []
        for thread in json.loads(result.stdout)["threads"]:
            ips = [int(f["ip"], 16) for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]
            truth = pcs.get(thread["tid"], [])
            outside = not_in_order(ips, truth)
            false_frames += [hex(ip) for ip in outside if (dump["name"], ip) not in KNOWN_STALE_PUBLIC_ONLY]
            reached += len(ips) - len(outside)  # gdb's frames, in its order (a recursion repeats an address)
            total += len(truth)
        check(result.returncode == 0 and not false_frames,
              f"{dump['name']} with its program's PUBLIC symbols only: each frame one gdb finds, in its order"
              + (f" (not gdb's: {false_frames})" if false_frames else ""))
    print(f"     programs with PUBLIC symbols only: {reached} of gdb's {total} frames reached")


def main(stackwalk, unpacked, options):
    tools = breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    if not tools:
        dumps.skip(f"Breakpad's tools could not be had (npm pack {NPM_PACKAGE})")
    check = dumps.Checks()
    made, walked = set(), {}
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "symbols")
        for dump in dumps.manifest():
            if dump["name"] in LEFT_OUT:
                print(f"     {dump['name']}: left out ({LEFT_OUT[dump['name']]})")
                continue
            check_dump(check, stackwalk, tools, unpacked, dump, store, made, tmp, walked)
        served(check, stackwalk, store, walked, tmp)
        public_only_programs(check, stackwalk, unpacked, store, walked, tmp)
        inline_frames(check, stackwalk, tools, tmp)
        jit_threads(check, stackwalk, tools, unpacked, store, made, tmp)
    windows_without_images(check, stackwalk, tools, unpacked)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
