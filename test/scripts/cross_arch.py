"""Linux cores of another architecture than the host's, walked as eu-stack and gdb
walk them: what arm64_test.py (qemu-user cores) and i386_test.py (the kernel's
cores of 32-bit programs, or qemu-i386's where the kernel runs none) share.

The test programs of test/dumps/programs are built with a cross compiler and run
(under qemu-user, or natively). Those that park their threads are sent SIGABRT once
every thread is asleep; the crash programs crash by themselves. Each thread's
physical frames (their addresses) must equal eu-stack's (`eu-stack --core -e`), or
gdb's where those two disagree; the names of the program's own frames must equal
gdb's. A thread in a signal handler is compared with eu-stack up to the trampoline
where the tools do not walk past it (qemu's arm64 trampoline has no CFI), and past
it with the program's own record (sigcontext.c prints the interrupted pc and sp and
a return address below them). With ../shared beside the project, every program's
--args report is compared with gdb's frames, names, arguments and tail-call frames
(compare.py --names --args --tailcalls).
"""
import dataclasses
import functools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

import dumps
from args_test import KNOWN_GDB_MISSES

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS_DIR = os.path.join(HERE, "..", "dumps", "programs")

# name, source, flags, how it ends (park: sent SIGABRT once ready; crash: by itself)
PROGRAMS = [
    ("threads-O0-fp", "threads.c", "-O0 -g -fno-omit-frame-pointer", "park"),
    ("threads-O2-nofp", "threads.c", "-O2 -g -fomit-frame-pointer", "park"),
    ("recursion-alloca", "recursion-alloca.c", "-O2 -g -fomit-frame-pointer", "park"),
    ("stripped", "stripped.c", "-O2 -fomit-frame-pointer", "park"),
    ("cxx-throw", "cxx-throw.cpp", "-O2 -g", "park"),
    ("args-O2", "args.c", "-O2 -g", "park"),
    ("sigcontext", "sigcontext.c", "-O2 -g", "park"),
    ("exit-park", "exit-park.c", "-O2 -g", "park"),
    ("read-park", "read-park.c", "-O2 -g", "park"),
    ("crash-segv", "crash-segv.c", "-O2 -g", "crash"),
    ("crash-abort", "crash-abort.c", "-O0 -g -fno-omit-frame-pointer", "crash"),
    ("crash-callnull", "crash-callnull.c", "-O0 -g -fno-omit-frame-pointer", "crash"),
    ("crash-cxx-uncaught", "crash-cxx-uncaught.cpp", "-O2 -g", "crash"),
]


@dataclasses.dataclass
class Platform:
    name: str             # as stackwalk reports the architecture
    triplet: str          # the cross tools' prefix: gcc, g++, strip
    libc: str             # the target's libc, which eu-stack and gdb read
    gdb: str              # the gdb that reads its cores
    runner: list          # what runs a program: [] natively, ["qemu-aarch64"]
    # gdb cannot read a PIE's load address from the core (qemu-user's have no
    # NT_FILE): it is placed by hand (symbol-file -o).
    place_executable: bool = False
    # Programs whose threads gdb never finishes walking (gdb-multiarch 13 on
    # qemu's arm64 signal trampoline): compared with eu-stack alone.
    gdb_loops: frozenset = frozenset()
    # Neither tool walks past the signal trampoline (qemu's arm64 one has no
    # CFI): a thread in a handler is compared up to it, then with its own record.
    tools_stop_at_trampoline: bool = False
    # Programs whose --args report gdb gets wrong, and why: not compared with it
    # (the test checks what is right instead).
    gdb_args_wrong: dict = dataclasses.field(default_factory=dict)
    # Programs where both tools stop early (code they have no unwind data for),
    # and why: stackwalk's frames must begin with theirs; the rest are counted.
    tools_stop_early: dict = dataclasses.field(default_factory=dict)
    # Of those, the program's own functions past where the tools stop, as its
    # source calls them (innermost first): what stackwalk finds there must be these.
    own_frames_past_stop: dict = dataclasses.field(default_factory=dict)
    # How a walk may end past a signal frame (the outermost frame's unwind data
    # says so; ARM's clone has none, and nothing unwinds past it).
    outermost_stops: frozenset = frozenset({"end_of_stack"})
    # Return addresses carry ARM's Thumb bit; frames show code addresses.
    thumb_bit: bool = False
    # Functions past whose frames Breakpad's walk with .sym files goes wrong, and why: a
    # minidump walked with .sym files alone is compared with Breakpad's walk up to
    # their frames, and with the core's walk throughout (cross_arch_minidumps.py).
    breakpad_wrong_past: dict = dataclasses.field(default_factory=dict)

    def tools(self):
        return [f"{self.triplet}-gcc", f"{self.triplet}-g++", "eu-stack", self.gdb] + self.runner[:1]

    def missing(self):
        return [t for t in self.tools() if not shutil.which(t)] + ([] if os.path.exists(self.libc) else [self.libc])


# This machine's own programs, as the x86-64 tests build and run them.
NATIVE = Platform(name="x86_64", triplet="x86_64-linux-gnu", libc="/lib/x86_64-linux-gnu/libc.so.6", gdb="gdb",
                  runner=[])


def is_stripped(name):
    """Programs named stripped or stripped-VARIANT are stripped of every symbol table and
    section that strip removes; a STRIPPED-twin is the same code left whole, to compare with."""
    return name.split("-")[0] == "stripped" and not name.endswith("-twin")


def build(platform, name, source, flags, tmp):
    exe = os.path.join(tmp, name)
    compiler = f"{platform.triplet}-g++" if source.endswith(".cpp") else f"{platform.triplet}-gcc"
    subprocess.run([compiler, *flags.split(), "-pthread", "-I", PROGRAMS_DIR,
                    os.path.join(PROGRAMS_DIR, source), "-o", exe], check=True)
    if is_stripped(name):
        subprocess.run([f"{platform.triplet}-strip", "--strip-all", exe], check=True)
    return exe


def unlimited_core():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def run_until_core(platform, exe, mode, workdir, env=None):
    """Runs the program until it dies (a parked one sent SIGABRT once READY and asleep); returns its output."""
    process = subprocess.Popen(platform.runner + [exe], cwd=workdir, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, preexec_fn=unlimited_core, text=True)
    output = []
    try:
        if mode == "park":
            for line in process.stdout:
                output.append(line)
                if line.strip() == "READY":
                    break
            # Under qemu-user each guest thread is a thread of qemu's own.
            dumps.wait_until_asleep(process.pid)
            process.send_signal(6)
        output += process.stdout.readlines()
        process.wait(timeout=60)
    finally:
        process.kill()
    return output, process.returncode


def capture_core(platform, exe, mode, workdir, is_core, env=None):
    """Runs the program until it dies; the one core file `is_core` picks in `workdir`,
    moved beside it, and the program's output."""
    output, status = run_until_core(platform, exe, mode, workdir, env)
    cores = [f for f in os.listdir(workdir) if is_core(f)]
    if len(cores) != 1:
        raise SystemExit(f"{exe}: {len(cores)} cores written (exit {status})")
    moved = os.path.join(os.path.dirname(workdir), os.path.basename(exe) + ".core")
    os.rename(os.path.join(workdir, cores[0]), moved)
    return moved, output


def qemu_capture(platform):
    """How a program run under qemu-user gives its core: qemu dumps the guest's as
    qemu_NAME_DATE_PID.core, then the host kernel would dump qemu itself as "core"
    (~150 MB): a directory of that name stops the second."""
    def capture(exe, mode, workdir):
        os.makedirs(os.path.join(workdir, "core"), exist_ok=True)
        return capture_core(platform, exe, mode, workdir, lambda f: f.startswith("qemu_") and f.endswith(".core"),
                            env=dict(os.environ, QEMU_STACK_SIZE="524288"))
    return capture


def stackwalk_report(stackwalk, core, exe, *args):
    out = subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {core}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def physical(thread):
    return [f for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]


# As JSON: a C++ function's name may hold spaces (a template's return type).
GDB_FRAMES = """
import json
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame, out = gdb.newest_frame(), []
    while frame is not None and len(out) < 2048:
        if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            out.append([frame.pc(), str(frame.name())])
        frame = frame.older()
    print("FRAMES", thread.ptid[1], json.dumps(out))
"""


# Each thread's registers in its newest frame, by the names stackwalk's --registers gives
# them (NAMES: stackwalk's name, gdb's).
GDB_REGISTERS = """
import json
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame, values = gdb.newest_frame(), {}
    for ours, theirs in NAMES:
        try:
            value = frame.read_register(theirs)  # signed where gdb types it so (i386's eax)
            values[ours] = int(value) & ((1 << (8 * value.type.sizeof)) - 1)
        except Exception:
            pass
    print("REGISTERS", thread.ptid[1], json.dumps(values))
"""
# stackwalk's names that mean another register in gdb: gdb's $fp is the frame's base address.
GDB_NAMES = {"arm64": {"fp": "x29"}, "arm": {"fp": "r11"}}


def registers_failures(platform, stackwalk, cores, tmp):
    """Every thread's context registers (--registers, frame 0) against gdb's: the core's
    register notes read in this architecture's layout."""
    failures, compared = [], 0
    for name, (core, exe) in cores.items():
        out = subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", "--registers"],
                             capture_output=True, text=True, check=True)
        # The newest physical frame's: an inlined call shares its frame's registers and lists none.
        newest = lambda t: next((f for f in t["frames"] if not f["inlined"]), {})
        ours = {t["tid"]: {r: int(v, 16) for r, v in (newest(t).get("registers") or {}).items()}
                for t in json.loads(out.stdout)["threads"]}
        names = [(r, GDB_NAMES.get(platform.name, {}).get(r, r)) for r in sorted({r for regs in ours.values() for r in regs})]
        script = os.path.join(tmp, "registers.py")
        with open(script, "w") as f:
            f.write(f"NAMES = {names!r}\n" + GDB_REGISTERS)
        gdb = subprocess.run(gdb_command(platform, core, exe) + ["-x", script], capture_output=True, text=True,
                             timeout=120)
        theirs = {int(line.split()[1]): json.loads(line.split(None, 2)[2])
                  for line in gdb.stdout.splitlines() if line.startswith("REGISTERS")}
        for tid, regs in ours.items():
            shared = {r for r in regs if r in theirs.get(tid, {})}
            differ = {r: (hex(regs[r]), hex(theirs[tid][r])) for r in shared if regs[r] != theirs[tid][r]}
            if len(shared) < 16 or differ:
                failures.append(f"{name} thread {tid}: registers as gdb's: {len(shared)} shared, differing {differ}"
                                )
            compared += len(shared)
    print(f"{'ok  ' if not failures else 'FAIL'} --registers: {compared} context registers of "
          f"{len(cores)} cores equal to {platform.gdb}'s")
    return failures


def load_bias(core, exe):
    """AT_ENTRY minus the executable's e_entry: where a PIE was loaded."""
    notes = subprocess.run(["eu-readelf", "-n", core], capture_output=True, text=True).stdout
    header = subprocess.run(["eu-readelf", "-h", exe], capture_output=True, text=True).stdout
    entry = int(re.search(r"ENTRY: (0x[0-9a-f]+)", notes).group(1), 16)
    return entry - int(re.search(r"Entry point address:\s+(0x[0-9a-f]+)", header).group(1), 16)


def gdb_command(platform, core, exe):
    """gdb with the core loaded (and a qemu core's PIE placed), before its -x scripts."""
    command = [platform.gdb, "-q", "-nx", "-batch", "-ex", "set debuginfod enabled off", "-ex", "set sysroot /",
               "-ex", "set backtrace past-main on", "-ex", f"file {exe}", "-ex", f"core-file {core}"]
    if platform.place_executable:
        command += ["-ex", f"symbol-file -o {load_bias(core, exe):#x} {exe}", "-ex", "sharedlibrary"]
    return command


def gdb_frames(platform, core, exe, tmp):
    """gdb's frames: {tid: [(pc, function name)]}."""
    script = os.path.join(tmp, "frames.py")
    with open(script, "w") as f:
        f.write(GDB_FRAMES)
    out = subprocess.run(gdb_command(platform, core, exe) + ["-x", script], capture_output=True, text=True,
                         timeout=120)
    threads = {}
    for line in out.stdout.splitlines():
        if line.startswith("FRAMES "):
            _, tid, frames = line.split(" ", 2)
            threads[int(tid)] = [(pc, name) for pc, name in json.loads(frames)]
    return threads


def set_aside_known_misses(name, oracle_path, report_path):
    """Takes out of gdb's arguments the ones it shows as optimized out although the
    source passes a known value (args_test.KNOWN_GDB_MISSES: glibc's ___pthread_join
    under a C++ main, as on x86-64); stackwalk shows that value or none."""
    with open(oracle_path) as f:
        oracle = json.load(f)
    with open(report_path) as f:
        ours = {t["tid"]: t["frames"] for t in json.load(f)["threads"]}
    failures = []
    for thread in oracle["threads"]:
        for frame in thread["frames"]:
            keep = []
            for arg in frame.get("args", []):
                truth = KNOWN_GDB_MISSES.get((name, frame["function"], arg["name"]))
                if arg["value"] is not None or truth is None:
                    keep.append(arg)
                    continue
                values = {a["value"] for f in ours.get(thread["tid"], []) if f["function"] == frame["function"]
                          for a in f.get("arguments", []) if a["name"] == arg["name"]}
                if not values <= {None, truth}:
                    failures.append(f"{name}: {frame['function']} {arg['name']} is {values}, the source passes {truth}")
            frame["args"] = keep
    with open(oracle_path, "w") as f:
        json.dump(oracle, f)
    return failures


def take_our_aliases(platform, exe, oracle_path, report_path):
    """Gives gdb's frames our name where gdb picked another symbol of the same address
    (aliases), so that compare.py compares what the two disagree on."""
    with open(oracle_path) as f:
        oracle = json.load(f)
    with open(report_path) as f:
        ours = {(t["tid"], int(frame["ip"], 16)): frame["function"] for t in json.load(f)["threads"]
                for frame in t["frames"] if not frame.get("inlined")}
    for thread in oracle["threads"]:
        for frame in thread["frames"]:
            name = ours.get((thread["tid"], int(frame["pc"], 16)))
            if name and frame["function"] and name != frame["function"] and \
                    aliases(platform, exe, without_parameters(name), frame["function"]):
                frame["function"] = name
    with open(oracle_path, "w") as f:
        json.dump(oracle, f)


def gdb_arguments_failures(platform, name, core, exe, report_path, tmp):
    """gdb's frames with their arguments (../shared/oracle/gdb-frames.py) against
    stackwalk's --args report: compare.py --names --args --tailcalls."""
    oracle = os.path.join(tmp, name + ".gdb-args.json")
    subprocess.run(gdb_command(platform, core, exe) + ["-ex", f"py ORACLE_OUT={oracle!r}", "-ex", "py ORACLE_ARGS=True",
                                                         "-x", dumps.GDB_FRAMES], capture_output=True, timeout=120)
    failures = set_aside_known_misses(name, oracle, report_path)
    take_our_aliases(platform, exe, oracle, report_path)
    out = subprocess.run([sys.executable, dumps.COMPARE, report_path, oracle, "--names", "--args", "--tailcalls",
                          "--verbose"],
                         capture_output=True, text=True)
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr
    print(f"     {name} --args vs {platform.gdb}: {summary}")
    return failures + ([] if out.returncode == 0 else [f"{name} --args vs {platform.gdb}: {out.stdout}"])


def eu_stack_frames(core, exe):
    return dumps.eu_stack_frames("-n", "2048", f"--core={core}", "-e", exe)


def own_record_failures(platform, name, thread, output):
    """The frames past the trampoline against what sigcontext.c printed."""
    record = [line.split() for line in output if line.startswith("SIGCONTEXT")]
    if not record:
        return [f"{name}: the program printed no SIGCONTEXT line"]
    pc, sp, below = (int(v, 16) for v in record[0][1:4])
    if platform.thumb_bit:
        below &= ~1
    frames = physical(thread)
    failures = []
    interrupted = next((i for i, f in enumerate(frames) if int(f["ip"], 16) == pc and int(f["sp"], 16) == sp), None)
    if interrupted is None:
        return [f"{name}: no frame at the interrupted pc {pc:#x}, sp {sp:#x}"]
    if interrupted == 0 or not frames[interrupted - 1]["signal_trampoline"]:
        failures.append(f"{name}: the frame before the interrupted one is not marked as the trampoline")
    ips = [int(f["ip"], 16) for f in frames[interrupted:]]
    if below not in ips:
        failures.append(f"{name}: the return address {below:#x} the program recorded is not below the signal frame")
    if thread["stop_reason"] not in platform.outermost_stops:
        failures.append(f"{name}: the walk past the signal frame ends with {thread['stop_reason']}")
    return failures


def without_parameters(function):
    """A C++ name without its parameter list: gdb's frame names have none."""
    if function and function.endswith(")"):
        depth = 0
        for i in range(len(function) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(function[i], 0)
            if depth == 0:
                return function[:i]
    return function


def past_stop_failures(platform, name, tid, past, main):
    """The program's own frames a thread has past where the tools stop, against
    the functions its source calls there (a stale return address the scan took
    would show as a function out of place or repeated)."""
    wanted = platform.own_frames_past_stop.get(name)
    own = [without_parameters(f["function"]) for f in past if f["module"] == main]
    if not past or wanted is None or own == list(wanted):
        return []
    return [f"{name} thread {tid}: the program's frames past where the tools stop are {own}, its source's {wanted}"]


@functools.cache
def symbol_addresses(triplet, exe):
    """{name: address} of the executable's symbol table."""
    out = subprocess.run([f"{triplet}-nm", exe], capture_output=True, text=True).stdout
    return {fields[2]: int(fields[0], 16) for fields in map(str.split, out.splitlines()) if len(fields) == 3}


def aliases(platform, exe, ours, theirs):
    """Whether two names are symbols of one address, of which gdb picks another than
    LLVM's symbolizer (a static glibc's __libc_start_main and __libc_start_main_impl)."""
    addresses = symbol_addresses(platform.triplet, exe)
    return ours in addresses and addresses.get(theirs) == addresses[ours]


def compare(platform, name, report, eu_stack, gdb, output):
    """Each thread's frames against eu-stack's, or gdb's where the two disagree
    (eu-stack follows a stale frame pointer from a bad call's frame); the names of
    the program's own frames against gdb's. Where eu-stack stops at a signal
    trampoline it does not walk past, up to it, then the program's own record."""
    failures, compared, extra = [], 0, 0
    ours = {t["tid"]: t for t in report["threads"]}
    if sorted(ours) != sorted(eu_stack) or sorted(ours) != sorted(gdb):
        return [f"{name}: threads {sorted(ours)} vs eu-stack's {sorted(eu_stack)}, gdb's {sorted(gdb)}"], 0
    executable = next((m for m in report["modules"] if m["file"] and m["file"].endswith("/" + name)), None)
    if executable is None:
        return [f"{name}: no module has the executable's file ({report['warnings']})"], 0
    main = executable["name"]
    for tid, thread in sorted(ours.items()):
        frames = physical(thread)
        ips = [int(f["ip"], 16) for f in frames]
        gdb_ips = [pc for pc, _ in gdb[tid]]
        oracle, expected = ("eu-stack", eu_stack[tid]) if eu_stack[tid] == gdb_ips else (platform.gdb, gdb_ips)
        cut = next((i for i, f in enumerate(frames) if f["signal_trampoline"]), None)
        if cut is not None and platform.tools_stop_at_trampoline:
            ips, expected, oracle = ips[:cut + 1], eu_stack[tid][:cut + 1], "eu-stack"
        if cut is not None:
            failures += own_record_failures(platform, name, thread, output)
        if name in platform.tools_stop_early and ips[:len(expected)] == expected:
            extra += len(ips) - len(expected)
            failures += past_stop_failures(platform, name, tid, frames[len(expected):], main)
            ips = ips[:len(expected)]
        compared += len(expected)
        if ips != expected:
            failures.append(f"{name} thread {tid}: {[hex(a) for a in ips]} vs {oracle}'s {[hex(a) for a in expected]}")
            continue
        names = dict(gdb[tid])
        for frame in frames[:len(expected)]:
            theirs = names.get(int(frame["ip"], 16))
            our_name = without_parameters(frame["function"])
            if frame["module"] == main and theirs not in (None, "None") and our_name != theirs and \
                    not aliases(platform, executable["file"], our_name, theirs):
                failures.append(f"{name} thread {tid}: {frame['function']} vs {platform.gdb}'s {theirs} at {frame['ip']}")
    if extra:
        print(f"     {name}: {extra} frame(s) past where the tools stop ({platform.tools_stop_early[name]})")
    return failures, compared


def compare_with_gdb(name, report, gdb, names=True):
    """Each thread's physical frames against gdb's on a core of the same process; with
    `names`, the program's own frames' names too."""
    failures, compared = [], 0
    ours = {t["tid"]: t for t in report["threads"]}
    if sorted(ours) != sorted(gdb):
        return [f"{name}: threads {sorted(ours)} vs gdb's {sorted(gdb)}"], 0
    for tid, thread in sorted(ours.items()):
        frames = physical(thread)
        ips, expected = [int(f["ip"], 16) for f in frames], [pc for pc, _ in gdb[tid]]
        compared += len(expected)
        if ips != expected:
            failures.append(f"{name} thread {tid}: {[hex(a) for a in ips]} vs gdb's {[hex(a) for a in expected]}")
            continue
        gdb_names = dict(gdb[tid]) if names else {}
        for frame in frames:
            theirs = gdb_names.get(int(frame["ip"], 16))
            named = theirs not in (None, "None")  # gdb's name for a frame of a stripped program
            if frame["module"] == name and named and without_parameters(frame["function"]) != theirs:
                failures.append(f"{name} thread {tid}: {frame['function']} vs gdb's {theirs} at {frame['ip']}")
    return failures, compared


def parked_programs_against_gdb(stackwalk, capture, walk_args, check, summary, names=True, platform=NATIVE,
                                extra_programs=()):
    """Each parking test program (and `extra_programs`, PROGRAMS' form) built for `platform`
    (this machine's by default, or one it runs natively) and captured while parked: `capture(exe)` gives (a core for gdb,
    the dump to walk); the dump is walked with `walk_args(tmp)` and each thread's frames
    compared with gdb's on the core (compare_with_gdb), `check(name, report)` adding
    failures of its own. The exit code."""
    failures, frames = [], 0
    programs = [p for p in [*PROGRAMS, *extra_programs] if p[3] == "park"]
    with tempfile.TemporaryDirectory(prefix="stackwalk-parked-") as tmp:
        for name, source, flags, _ in programs:
            exe = build(platform, name, source, flags, tmp)
            core, dump = capture(exe)
            out = subprocess.run([stackwalk, dump, "-a", "--json", *walk_args(tmp)], capture_output=True, text=True)
            if out.returncode != 0:
                failures.append(f"{name}: stackwalk exit {out.returncode}: {out.stderr}")
                continue
            report = json.loads(out.stdout)
            found, compared = compare_with_gdb(name, report, gdb_frames(platform, core, exe, tmp), names)
            found += check(name, report)
            failures += found
            frames += compared
            print(f"{'ok  ' if not found else 'FAIL'} {name}: {len(report['threads'])} threads, {compared} frames")
    return dumps.failures_summary(failures, f"{len(programs)} {summary}, {frames} frames compared with gdb")


def functions(report, program):
    """Each thread's physical frames' functions (module!function, the program's module
    as "program"), as a sorted list of lists."""
    return sorted([f"{'program' if f['module'] == program else f['module']}!{f['function']}" for f in physical(t)]
                  for t in report["threads"])


def wrong_executable(stackwalk, core, other):
    """A different executable given with -e names no frame: its identity differs."""
    out = subprocess.run([stackwalk, core, "-e", other, "--json"], capture_output=True, text=True)
    report = json.loads(out.stdout)
    main = [m for m in report["modules"] if m["file"] == other]
    if main:
        return [f"-e {other}: accepted for {core} ({main[0]['note']})"]
    return []


def without_libraries_failures(stackwalk, cores, alone_args=(), full_args=()):
    """Each core walked with its executable alone (--no-host-files: no library's file
    is read, as for a dump from elsewhere): the libraries' frames are found through
    frame records, their callers' through the executable's CFI. Each thread's frames
    must be frames of the walk with every file, in the same order: a chain of frame
    records skips a function that keeps none (the -fomit-frame-pointer programs), but
    invents nothing. What it caught: on arm64 a frame found through a record has only
    a bound on its stack pointer, and CFI from that bound read stale return addresses
    (6 of 41 threads had a frame of no walk before its CFA came from the caller's own
    record); on i386 a scan found a -O0 caller without the ebp its CFI needs, and a
    second scan took stale return addresses (2 of 12 programs, before the scan took the
    frame pointer back from the frames it passed over); on ARM main's address, which
    __libc_start_main keeps, followed the PLT's last entry read as a Thumb blx
    (3 of 17 programs, before a direct call's target had to be code). `alone_args` and
    `full_args` are added to the two walks (where the libraries are not the host's)."""
    failures, skipped, total = [], 0, 0
    for name, (core, exe) in sorted(cores.items()):
        out = subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", "--no-host-files", *alone_args],
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            failures.append(f"{name} without its libraries: exit {out.returncode}: {out.stderr.strip()}")
            continue
        full = stackwalk_report(stackwalk, core, exe, *full_args)
        for alone, whole in zip(json.loads(out.stdout)["threads"], full["threads"]):
            ours, theirs = [f["ip"] for f in physical(alone)], [f["ip"] for f in physical(whole)]
            remaining = iter(theirs)
            if not all(ip in remaining for ip in ours):
                failures.append(f"{name} thread {alone['tid']} without its libraries: {ours}, "
                                f"not in order among the walk's with them: {theirs}")
            skipped, total = skipped + len(theirs) - len(ours), total + len(theirs)
    print(f"{'ok  ' if not failures else 'FAIL'} without the libraries' files: no frame that the walk with them "
          f"lacks; {skipped} of its {total} frames skipped")
    return failures


def arguments_failures(platform, stackwalk, cores, tmp):
    """Every program's --args report against gdb's (but the ones gdb never finishes)."""
    if not os.path.exists(dumps.COMPARE):
        print(f"note: {dumps.COMPARE} is absent: --args is not compared with {platform.gdb}")
        return []
    failures = []
    for name, (core, exe) in cores.items():
        if name in platform.gdb_loops:
            continue
        if name in platform.gdb_args_wrong:
            print(f"     {name} --args: not compared with {platform.gdb}: {platform.gdb_args_wrong[name]}")
            continue
        if name in platform.tools_stop_early:
            print(f"     {name} --args: not compared with {platform.gdb}, which stops early")
            continue
        report_path = os.path.join(tmp, name + ".json")
        with open(report_path, "w") as f:
            subprocess.run([stackwalk, core, "-e", exe, "--all-threads", "--json", "--args"], stdout=f, check=True)
        failures += gdb_arguments_failures(platform, name, core, exe, report_path, tmp)
    return failures


# i386's and ARM's libc have two pthread_kill symbols: pthread_kill@@GLIBC_2.34 (__pthread_kill,
# whose __pthread_kill_internal tail-calls __pthread_kill_implementation with no_tid 0)
# and the compat one of the architecture's first glibc (__pthread_kill_esrch, no_tid 1).
# The program links the first; gdb resolves send_to_self's call through the PLT by name
# to the second, and shows its tail-call frame and an entry value of no_tid (3) from it.
PTHREAD_KILL = ("gdb resolves the call of pthread_kill@plt to the compat pthread_kill (__pthread_kill_esrch), "
                "not the pthread_kill@@GLIBC_2.34 the program links")


def pthread_kill_and_without_libraries(stackwalk, cores):
    """What i386_test and arm_test check last: pthread_kill_truth, then without_libraries_failures."""
    return pthread_kill_truth(stackwalk, cores) + without_libraries_failures(stackwalk, cores)


def pthread_kill_truth(stackwalk, cores):
    """sigcontext's signal thread, past the signal frame: the tail call through
    __pthread_kill_internal, and __pthread_kill_implementation's no_tid 0."""
    core, exe = cores["sigcontext"]
    out = subprocess.run([stackwalk, core, "-e", exe, "-a", "--json", "--args"], capture_output=True, text=True)
    frames = [f for t in json.loads(out.stdout)["threads"] for f in t["frames"]]
    tail = [f["function"] for f in frames if f["tail_call"]]
    no_tid = [a["value"] for f in frames if f["function"] == "__pthread_kill_implementation"
              for a in f.get("arguments", []) if a["name"] == "no_tid"]
    ok = tail == ["__pthread_kill_internal"] and no_tid == ["0"]
    print(f"{'ok  ' if ok else 'FAIL'} sigcontext: pthread_kill's tail call {tail}, no_tid {no_tid}")
    return [] if ok else [f"sigcontext: tail calls {tail}, no_tid {no_tid}; expected __pthread_kill_internal, 0"]


def run(platform, stackwalk, capture, programs=PROGRAMS, special=None, last=None):
    """Builds, cores and compares every program; `capture(exe, mode, workdir)` gives a
    core and the program's output; `special(name, report, reports, eu_stack)` may check
    a program in its own way (returning its failures) instead of against the tools;
    `last(stackwalk, cores)` checks what else the platform needs (its failures)."""
    missing = platform.missing()
    if missing:
        print(f"SKIP: not installed: {' '.join(missing)}")
        return 77
    failures, frames = [], 0
    with tempfile.TemporaryDirectory(prefix=f"stackwalk-{platform.name}-") as tmp:
        cores, reports = {}, {}
        for name, source, flags, mode in programs:
            exe = build(platform, name, source, flags, tmp)
            workdir = os.path.join(tmp, "run-" + name)
            os.makedirs(workdir)
            core, output = capture(exe, mode, workdir)
            report = stackwalk_report(stackwalk, core, exe)
            reports[name] = report
            eu_stack = eu_stack_frames(core, exe)
            found = special(name, report, reports, eu_stack) if special else None
            if found is not None:
                failures += found
                continue
            cores[name] = (core, exe)
            gdb = {tid: [(pc, None) for pc in pcs] for tid, pcs in eu_stack.items()} if name in platform.gdb_loops \
                else gdb_frames(platform, core, exe, tmp)
            found, compared = compare(platform, name, report, eu_stack, gdb, output)
            failures += found
            frames += compared
            print(f"{'ok  ' if not found else 'FAIL'} {name}: {len(report['threads'])} threads, {compared} frames")
        failures += arguments_failures(platform, stackwalk, cores, tmp)
        failures += registers_failures(platform, stackwalk, cores, tmp)
        failures += wrong_executable(stackwalk, cores["crash-segv"][0], cores["crash-abort"][1])
        if last:
            failures += last(stackwalk, cores)
    return dumps.failures_summary(
        failures, f"{len(programs)} {platform.name} programs, {frames} frames compared with eu-stack and {platform.gdb}")
