#!/usr/bin/env python3
"""stackwalk --pid on running processes (issue 24).

Usage: live_test.py STACKWALK UNPACKED_DUMPS_DIR

Each test program that parks its threads in known places (test/dumps) is
started and, once every thread is asleep, walked by `stackwalk --pid` and by
`eu-stack -p` (by `gdb -p` for the program with JIT code registered through
the GDB JIT interface), one after the other: each thread's physical frames
(their addresses) must be equal. Afterwards every thread of the program must be
running again, untraced, and the program must still be there. A copy of the
first program deleted while it runs is still named (through map_files). Then the
errors: a pid that does not exist, another user's process, a process a
debugger holds: one line each, exit code 3, the process untouched; a
--thread the process does not have: exit code 2, as for a dump. stackwalk
killed (SIGINT, SIGTERM, SIGKILL) while it holds the threads leaves them
running. With process_vm_readv refused (a seccomp filter), /proc/PID/mem gives
the same frames. A process whose threads start and exit without end
(test/live/thread-churn.c) is walked 20 times: its parked threads the same
each time, and it runs on.

With dotnet (an SDK and createdump): test/dumps/dotnet/program is built and
parked; its managed frames and runtime Frames walked live must equal those
of a createdump dump of the same process taken right after.

--save-core: the core written of the first program reads back, in stackwalk
and in gdb, to the frames of the live walk; the .NET program's, in stackwalk,
to the same managed frames.
"""
import ctypes
import errno
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dumps

PROGRAMS = ["threads-O2-nofp", "threads-O0-fp", "args-O2", "sighandler", "stripped"]
# JIT code registered through the GDB JIT interface: eu-stack does not read
# it, so gdb -p is the oracle.
GDB_PROGRAMS = ["jit-gdb"]


def task_states(pid):
    states = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        states[int(tid)] = (fields["State"].split()[0], int(fields["TracerPid"]))
    return states


def wait_asleep(pid):
    for _ in range(200):
        if all(state == "S" for state, _ in task_states(pid).values()):
            return
        time.sleep(0.01)
    raise SystemExit(f"not every thread of {pid} is asleep")


def physical_frames(report):
    return {t["tid"]: [int(f["ip"], 16) for f in t["frames"] if not f["inlined"] and not f["tail_call"]]
            for t in report["threads"]}


def stackwalk_frames(stackwalk, pid, *options):
    out = subprocess.run([stackwalk, "--pid", str(pid), "--all-threads", "--json", *options],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk --pid {pid}: exit {out.returncode}: {out.stderr}")
    report = json.loads(out.stdout)
    assert report["dump"]["format"] == "live" and report["dump"]["pause_us"] > 0, report["dump"]
    return physical_frames(report)


GDB_FRAMES = """python
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame, pcs = gdb.newest_frame(), []
    while frame is not None:
        if frame.type() not in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
            pcs.append(frame.pc())
        frame = frame.older()
    print("FRAMES", thread.ptid[1], " ".join(map(str, pcs)))
"""


def gdb_frames(*target):
    """Each thread's physical frames as gdb sees them (an executable and a core, or -p PID)."""
    gdb = subprocess.run(["gdb", "-q", "-nx", "-batch", "-ex", "set backtrace past-main on", *target, "-ex", GDB_FRAMES],
                         capture_output=True, text=True)
    return {int(line.split()[1]): [int(a) for a in line.split()[2:]]
            for line in gdb.stdout.splitlines() if line.startswith("FRAMES")}


def saved_core(stackwalk, exe, pid, tmp):
    """--save-core: the core it writes walks to the same frames in stackwalk and in gdb."""
    core = os.path.join(tmp, "saved.core")
    live = stackwalk_frames(stackwalk, pid, "--save-core", core)
    out = subprocess.run([stackwalk, core, "--all-threads", "--json"], capture_output=True, text=True)
    failures = []
    if out.returncode != 0 or physical_frames(json.loads(out.stdout)) != live:
        failures.append(f"--save-core: stackwalk reads other frames from the core (exit {out.returncode})")
    if shutil.which("gdb"):
        theirs = gdb_frames(exe, core)
        if theirs != live:
            failures.append(f"--save-core: gdb's frames {theirs} vs the live walk's {live}")
    print(f"     --save-core: {os.path.getsize(core)} bytes, {sum(map(len, live.values()))} frames read back")
    return failures


def eu_stack_frames(pid):
    return dumps.eu_stack_frames("-p", str(pid))


def check_running(pid, name):
    time.sleep(0.05)
    states = task_states(pid)
    held = {tid: s for tid, s in states.items() if s[0] not in "SR" or s[1] != 0}
    if held:
        raise SystemExit(f"{name}: threads left stopped or traced after the walk: {held}")


def interrupted(stackwalk, unpacked):
    """stackwalk killed while it holds the threads (held there by STACKWALK_TEST_FAULT=hang:pid),
    by SIGINT, SIGTERM or SIGKILL: the kernel detaches them as stackwalk exits, and every
    thread runs on, untraced; the process can be walked again."""
    failures = []
    process = dumps.start_parked(os.path.join(unpacked, "bin", PROGRAMS[0]))
    try:
        wait_asleep(process.pid)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            walker = subprocess.Popen([stackwalk, "--pid", str(process.pid)], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, env=dict(os.environ, STACKWALK_TEST_FAULT="hang:pid"))
            for _ in range(500):
                states = task_states(process.pid)
                if all(tracer == walker.pid and state == "t" for state, tracer in states.values()):
                    break
                time.sleep(0.01)
            else:
                failures.append(f"{sig.name}: the threads were never all held by stackwalk: {task_states(process.pid)}")
            walker.send_signal(sig)
            walker.wait(timeout=30)
            try:
                check_running(process.pid, f"stackwalk killed by {sig.name} during the pause")
            except SystemExit as e:
                failures.append(str(e))
        again = subprocess.run([stackwalk, "--pid", str(process.pid)], capture_output=True, text=True)
        if again.returncode != 0:
            failures.append(f"walked again after the kills: exit {again.returncode}: {again.stderr}")
        check_running(process.pid, "walked again")
    finally:
        process.kill()
        process.wait()
    print(f"     killed by SIGINT, SIGTERM and SIGKILL while holding {PROGRAMS[0]}'s threads: "
          f"{'every thread ran on' if not failures else 'FAILED'}")
    return failures


def group_stopped(stackwalk, unpacked):
    """A process someone stopped (SIGSTOP: a group-stop) is walked, every thread, and left as it
    was: still stopped, untraced; SIGCONT then wakes it as if stackwalk had not been there."""
    failures = []
    process = dumps.start_parked(os.path.join(unpacked, "bin", PROGRAMS[0]))
    try:
        wait_asleep(process.pid)
        threads = len(task_states(process.pid))
        process.send_signal(signal.SIGSTOP)
        for _ in range(200):
            if all(state == "T" for state, _ in task_states(process.pid).values()):
                break
            time.sleep(0.01)
        walked = stackwalk_frames(stackwalk, process.pid)
        if len(walked) != threads or not all(walked.values()):
            failures.append(f"a stopped process: {len(walked)} of {threads} threads walked")
        after = task_states(process.pid)
        if any(state != "T" or tracer != 0 for state, tracer in after.values()):
            failures.append(f"a stopped process is not left stopped and untraced: {after}")
        process.send_signal(signal.SIGCONT)
        wait_asleep(process.pid)
    finally:
        process.kill()
        process.wait()
    print(f"     a process stopped by SIGSTOP: walked ({threads} threads) and left stopped, then woken by SIGCONT")
    return failures


def several(stackwalk, unpacked):
    """--pid given several times: one report each, in order, as a batch of dumps gives them;
    a pid that is gone is an error record of its own, the others reported, exit 1."""
    failures = []
    programs = [dumps.start_parked(os.path.join(unpacked, "bin", name)) for name in PROGRAMS[:2]]
    try:
        for process in programs:
            wait_asleep(process.pid)
        gone = 2**22 + 12345
        out = subprocess.run([stackwalk, "--ndjson", *[a for p in programs for a in ("--pid", str(p.pid))],
                              "--pid", str(gone)], capture_output=True, text=True)
        records = [json.loads(line) for line in out.stdout.splitlines()]
        pids = [(r["dump"].get("pid"), (r.get("error") or {}).get("message")) for r in records]
        want = [(p.pid, None) for p in programs] + [(None, f"no process {gone}")]
        if out.returncode != 1 or pids != want:
            failures.append(f"--pid three times: exit {out.returncode}, reports {pids}, wanted {want}")
        walked = sum(len(r.get("threads", [])) for r in records)
        for process, name in zip(programs, PROGRAMS):
            check_running(process.pid, name)
    finally:
        for process in programs:
            process.kill()
            process.wait()
    print(f"     --pid three times: {len(records)} reports in order ({walked} threads), the gone pid an error")
    return failures


def deleted_binary(stackwalk, unpacked, tmp):
    """A program whose file was deleted after it started is named through /proc/PID/map_files;
    the core --save-core writes of it holds the program's pages, and walks to the same frames
    though the program's file is gone (the program rebuilt from them, unwound by its CFI)."""
    copy = os.path.join(tmp, "deleted-prog")
    core = os.path.join(tmp, "deleted-prog.core")
    shutil.copy(os.path.join(unpacked, "bin", PROGRAMS[0]), copy)
    process = dumps.start_parked(copy)
    try:
        os.unlink(copy)
        wait_asleep(process.pid)
        out = subprocess.run([stackwalk, "--pid", str(process.pid), "--all-threads", "--save-core", core, "--json"],
                             capture_output=True, text=True)
    finally:
        process.kill()
        process.wait()
    if out.returncode != 0:
        return [f"a deleted program: stackwalk exit {out.returncode}: {out.stderr}"]
    live = json.loads(out.stdout)
    if not any(f["module"] == "deleted-prog" and f["function"] == "main" and f["line"]
               for t in live["threads"] for f in t["frames"]):
        return ["a deleted program's frames are not named from its mapped file"]
    saved = subprocess.run([stackwalk, core, "--all-threads", "--json"], capture_output=True, text=True)
    if saved.returncode != 0:
        return [f"the saved core of a deleted program: stackwalk exit {saved.returncode}"]
    report = json.loads(saved.stdout)
    program = next((m for m in report["modules"] if m["name"] == "deleted-prog"), None)
    failures = []
    if not program or not (program["note"] or "").startswith("rebuilt from the dump's memory"):
        failures.append(f"the saved core of a deleted program: the program is not rebuilt ({program})")
    if physical_frames(report) != physical_frames(live):
        failures.append("the saved core of a deleted program walks to other frames than the live walk")
    return failures


def errors(stackwalk, victim):
    failures = []

    def expect(args, pattern, what, user=None, code=3, options=()):
        command = ([shutil.which("setpriv"), "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if user else []) + \
            [stackwalk, "--pid", str(args), *options]
        out = subprocess.run(command, capture_output=True, text=True)
        lines = out.stderr.strip().splitlines()
        if out.returncode != code or len(lines) != 1 or not re.search(pattern, lines[0]):
            failures.append(f"{what}: exit {out.returncode}, stderr {out.stderr!r}")

    expect(2**22 + 12345, r"^stackwalk: no process \d+$", "no such process")
    expect(victim.pid, r"thread 1 is not in the process \(its threads: \d+", "a thread it does not have",
           code=2, options=("--thread", "1"))
    if os.geteuid() == 0 and shutil.which("setpriv"):
        expect(victim.pid, r"not permitted to trace process \d+", "another user's process", user="nobody")
    if shutil.which("gdb"):
        gdb = subprocess.Popen(["gdb", "-q", "-nx", "-batch", "-p", str(victim.pid), "-ex", "shell sleep 2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            if any(tracer for _, tracer in task_states(victim.pid).values()):
                break
            time.sleep(0.01)
        expect(victim.pid, r"already traced by process \d+", "a traced process")
        # gdb detaches when its batch ends; killed, it would leave the threads in the
        # stop its attach's SIGSTOP began.
        gdb.wait(timeout=120)
    return failures


MANAGED = re.compile(r"[\w.]+\.dll!.*\+0x[0-9a-f]+|\[\w+Frame")


def managed_frames(stackwalk, *args):
    out = subprocess.run([stackwalk, "--all-threads", *args], capture_output=True, text=True)
    return out.returncode, [m.group(0) for line in out.stdout.splitlines() if (m := MANAGED.search(line))]


def dotnet_case(stackwalk):
    """The parked .NET program: live managed frames against a createdump dump's."""
    dotnet = shutil.which("dotnet")
    if not dotnet or not subprocess.run([dotnet, "--list-sdks"], capture_output=True, text=True).stdout.strip():
        print("     (no dotnet SDK: the .NET program is not walked live)")
        return []
    program = os.path.join(os.path.dirname(__file__), "..", "dumps", "dotnet", "program")
    with tempfile.TemporaryDirectory(prefix="stackwalk-live-") as tmp:
        build = subprocess.run([dotnet, "build", "-c", "Release", "-nologo", "-v:q", "-o", f"{tmp}/app",
                                f"-p:BaseIntermediateOutputPath={tmp}/obj/"], cwd=program, capture_output=True, text=True)
        if build.returncode != 0:
            return [f"building the .NET program failed: {build.stdout[-2000:]}"]
        process = dumps.start_parked(os.path.join(tmp, "app", "StackwalkDotnet"), "park", f"{tmp}/park.json")
        try:
            wait_asleep(process.pid)
            code, live = managed_frames(stackwalk, "--pid", str(process.pid), "--save-core", f"{tmp}/saved.core")
            check_running(process.pid, "the .NET program")
            # the runtime the program runs on: the one dotnet lists last, as make-dumps.sh picks
            version, folder = re.findall(r"Microsoft.NETCore.App ([\d.]+) \[(.*)\]", subprocess.run(
                [dotnet, "--list-runtimes"], capture_output=True, text=True).stdout)[-1]
            createdump = os.path.join(folder, version, "createdump")
            subprocess.run([createdump, "-f", f"{tmp}/park.core", str(process.pid)], capture_output=True, check=True)
            _, dumped = managed_frames(stackwalk, f"{tmp}/park.core")
            _, saved = managed_frames(stackwalk, f"{tmp}/saved.core")
        finally:
            process.kill()
            process.wait()
    print(f"     .NET program: {len(live)} managed and runtime frames live, {len(dumped)} in its dump, "
          f"{len(saved)} in the core --save-core wrote")
    if code != 0 or not live or live != dumped or saved != live:
        return [f".NET program: live {live} vs dump {dumped} vs saved core {saved} (exit {code})"]
    return []


def compare(name, ours, theirs, oracle):
    """Each thread's physical frames of the live walk against the oracle's: the failures."""
    failures = []
    if sorted(ours) != sorted(theirs):
        failures.append(f"{name}: threads {sorted(ours)} vs {oracle}'s {sorted(theirs)}")
    for tid in sorted(set(ours) & set(theirs)):
        if ours[tid] != theirs[tid]:
            failures.append(f"{name} thread {tid}: {[hex(a) for a in ours[tid]]} vs {oracle}'s "
                            f"{[hex(a) for a in theirs[tid]]}")
    return failures


def many_threads(stackwalk):
    """bench/programs/many-threads.c with 50 and with 500 threads, each 20-30 frames deep in
    read(): every thread's frames equal eu-stack -p's, and every thread runs on afterwards."""
    if not shutil.which("gcc"):
        print("     (no gcc: the many-threads program is not walked live)")
        return []
    failures = []
    source = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "programs", "many-threads.c")
    with tempfile.TemporaryDirectory(prefix="stackwalk-live-many-") as tmp:
        exe = os.path.join(tmp, "many-threads")
        subprocess.run(["gcc", "-O2", "-g", "-pthread", "-o", exe, source], check=True)
        for count in (50, 500):
            process = subprocess.Popen([exe, str(count)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=tmp)
            try:
                if not any(line.startswith(b"READY") for line in process.stdout):
                    failures.append(f"many-threads {count}: never ready")
                    continue
                dumps.wait_until_asleep(process.pid)
                ours = stackwalk_frames(stackwalk, process.pid)
                check_running(process.pid, f"many-threads {count}")
                theirs = eu_stack_frames(process.pid)
                failures += compare(f"many-threads {count}", ours, theirs, "eu-stack -p")
                frames = sum(len(theirs[tid]) for tid in set(ours) & set(theirs))
                print(f"     many-threads {count}: {len(ours)} threads, {frames} frames compared with eu-stack -p")
            finally:
                process.kill()
                process.wait()
    return failures


def without_process_vm_readv(error):
    """A preexec_fn: a seccomp filter makes process_vm_readv fail with `error` in the child, as
    container profiles and kernels built without it do."""
    number = {"x86_64": 310, "aarch64": 270}[platform.machine()]

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    load_number, jump_if_equal, give = 0x20, 0x15, 0x06  # BPF_LD|W|ABS (seccomp_data.nr), BPF_JMP|JEQ|K, BPF_RET|K
    program = (SockFilter * 4)((load_number, 0, 0, 0), (jump_if_equal, 0, 1, number),
                               (give, 0, 0, 0x00050000 | error), (give, 0, 0, 0x7FFF0000))  # ERRNO(error), ALLOW

    def install():
        libc = ctypes.CDLL(None, use_errno=True)
        prog = SockFprog(len(program), program)
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # NO_NEW_PRIVS, SECCOMP
            os._exit(99)
    return install


def proc_mem_fallback(stackwalk, pid, expected):
    """process_vm_readv refused (ENOSYS, then EPERM): stackwalk reads /proc/PID/mem instead, to
    the same frames. A probe under the same filter shows the call really fails."""
    failures = []
    for name, error in (("ENOSYS", errno.ENOSYS), ("EPERM", errno.EPERM)):
        probe = subprocess.run([sys.executable, "-c", "import ctypes,os,sys; libc=ctypes.CDLL(None, use_errno=True); "
                                "b=ctypes.create_string_buffer(8); iov=(ctypes.c_void_p*2)(ctypes.addressof(b), 8); "
                                "r=libc.process_vm_readv(os.getpid(), iov, 1, iov, 1, 0); sys.exit(ctypes.get_errno() if r < 0 else 0)"],
                               preexec_fn=without_process_vm_readv(error))
        if probe.returncode != error:
            failures.append(f"process_vm_readv under the {name} filter: exit {probe.returncode}, not {error}")
            continue
        out = subprocess.run([stackwalk, "--pid", str(pid), "--all-threads", "--json"], capture_output=True, text=True,
                             preexec_fn=without_process_vm_readv(error))
        ours = physical_frames(json.loads(out.stdout)) if out.returncode == 0 else {}
        if ours != expected:
            failures.append(f"process_vm_readv refused ({name}): exit {out.returncode}, frames {ours} vs {expected}")
    if not failures:
        print(f"     process_vm_readv refused (ENOSYS, EPERM): /proc/PID/mem read, {sum(map(len, expected.values()))} frames alike")
    return failures


def traced_or_stopped(pid):
    """Threads stopped or traced (exiting threads may be zombies for a moment: not counted)."""
    held = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # exited meanwhile
        state, tracer = fields["State"].split()[0], int(fields["TracerPid"])
        if state in "tT" or tracer:
            held[int(tid)] = (state, tracer)
    return held


def thread_churn(stackwalk, walks=20):
    """test/live/thread-churn.c: threads start and exit while stackwalk stops the process, walked
    `walks` times. Each walk exits 0 with the four parked threads, whose frames are the same every
    time and equal eu-stack -p's; a thread that exited while being stopped is named in a warning;
    afterwards no thread is stopped or traced, and the process answers on its stdin, its spawner
    still starting threads."""
    if not shutil.which("gcc"):
        print("     (no gcc: the thread-churn program is not walked live)")
        return []
    failures = []
    source = os.path.join(os.path.dirname(__file__), "..", "live", "thread-churn.c")
    with tempfile.TemporaryDirectory(prefix="stackwalk-live-churn-") as tmp:
        exe = os.path.join(tmp, "thread-churn")
        subprocess.run(["gcc", "-O2", "-g", "-pthread", "-o", exe, source], check=True)
        process = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   text=True)

        def started():
            process.stdin.write("?\n")
            process.stdin.flush()
            return int(process.stdout.readline().split()[1])
        try:
            if not process.stdout.readline().startswith("READY"):
                return ["thread-churn: never ready"]
            before, first, dropped = started(), None, 0
            for _ in range(walks):
                out = subprocess.run([stackwalk, "--pid", str(process.pid), "--all-threads", "--json"],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    failures.append(f"thread-churn: stackwalk --pid exit {out.returncode}: {out.stderr.strip()}")
                    break
                report = json.loads(out.stdout)
                parked = {t["tid"] for t in report["threads"] if any(f.get("function") == "park_inner" for f in t["frames"])}
                frames = {tid: pcs for tid, pcs in physical_frames(report).items() if tid in parked}
                dropped += any("exited or did not stop" in w for w in report.get("warnings", []))
                if len(parked) != 4 or (first is not None and frames != first):
                    failures.append(f"thread-churn: parked threads {frames} vs first walk's {first}")
                first = first or frames
                if held := traced_or_stopped(process.pid):
                    failures.append(f"thread-churn: threads left stopped or traced: {held}")
            theirs = {tid: pcs for tid, pcs in eu_stack_frames(process.pid).items() if tid in (first or {})}
            failures += compare("thread-churn parked threads", first or {}, theirs, "eu-stack -p")
            after = started()
            if after <= before:
                failures.append(f"thread-churn: no thread started since the walks ({before} then {after})")
            print(f"     thread-churn: {walks} walks while threads start and exit, the 4 parked threads' frames "
                  f"equal eu-stack -p's; {dropped} walks dropped an exiting thread; {after - before} threads started meanwhile")
        finally:
            process.kill()
            process.wait()
    return failures


def main():
    stackwalk, unpacked = sys.argv[1], sys.argv[2]
    if not shutil.which("eu-stack"):
        print("SKIP: eu-stack is not installed")
        return 77
    failures, frames = [], 0
    probe = dumps.start_parked(os.path.join(unpacked, "bin", PROGRAMS[0]))
    refused = subprocess.run([stackwalk, "--pid", str(probe.pid)], capture_output=True, text=True).stderr
    probe.kill()
    probe.wait()
    if "not permitted to trace" in refused:
        print(f"SKIP: this machine does not let stackwalk trace its own test program: {refused.strip()}")
        return 77
    gdb_programs = GDB_PROGRAMS if shutil.which("gdb") else []
    for name in PROGRAMS + gdb_programs:
        process = dumps.start_parked(os.path.join(unpacked, "bin", name))
        try:
            wait_asleep(process.pid)
            ours = stackwalk_frames(stackwalk, process.pid)
            check_running(process.pid, name)
            oracle = "gdb -p" if name in GDB_PROGRAMS else "eu-stack -p"
            theirs = gdb_frames("-p", str(process.pid)) if name in GDB_PROGRAMS else eu_stack_frames(process.pid)
            check_running(process.pid, name)
            failures += compare(name, ours, theirs, oracle)
            frames += sum(len(theirs[tid]) for tid in set(ours) & set(theirs))
            if name == PROGRAMS[0]:
                failures += errors(stackwalk, process)
                with tempfile.TemporaryDirectory(prefix="stackwalk-live-") as tmp:
                    failures += saved_core(stackwalk, os.path.join(unpacked, "bin", name), process.pid, tmp)
                    failures += deleted_binary(stackwalk, unpacked, tmp)
                failures += proc_mem_fallback(stackwalk, process.pid, ours)
                check_running(process.pid, name)
            if process.poll() is not None:
                failures.append(f"{name} exited after the walk")
        finally:
            process.kill()
            process.wait()
    failures += many_threads(stackwalk)
    failures += thread_churn(stackwalk)
    failures += interrupted(stackwalk, unpacked)
    failures += several(stackwalk, unpacked)
    failures += group_stopped(stackwalk, unpacked)
    failures += dotnet_case(stackwalk)
    return dumps.failures_summary(
        failures, f"{len(PROGRAMS) + len(gdb_programs)} programs, {frames} frames compared with eu-stack -p and gdb -p")


if __name__ == "__main__":
    sys.exit(main())
