"""Shared helpers for the tests over test/dumps: the manifest, running
stackwalk on a dump, and preparing gdb's frames for ../shared/oracle/compare.py."""
import json
import re
import os
import shutil
import socket
import subprocess
import urllib.error
import urllib.request
import time
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "test", "dumps")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
COMPARE = os.path.join(SHARED, "oracle", "compare.py")
GDB_FRAMES = os.path.join(SHARED, "oracle", "gdb-frames.py")
SKIP = 77  # ctest's SKIP_RETURN_CODE


def skip(message):
    print("SKIP: " + message)
    sys.exit(SKIP)


def manifest(subdir=""):
    with open(os.path.join(SOURCE, subdir, "dumps.json")) as f:
        return json.load(f)["dumps"]


def cores_with_programs(unpacked):
    """The Linux cores of test/dumps whose program is at hand: name -> (core, executable)."""
    return {d["name"]: (os.path.join(unpacked, d["core"]), os.path.join(unpacked, d["executable"]))
            for d in manifest() if d.get("executable")}


def every_file_args(unpacked):
    """Arguments that point stackwalk at every file of test/dumps' cores (absolute paths)."""
    return ["--sysroot", os.path.join(unpacked, "sysroot"), "--module-path", os.path.join(unpacked, "bin"),
            "--module-path", os.path.join(unpacked, "debug")]


def stackwalk_args(dump):
    """Arguments that point stackwalk at a dump's files, relative to the unpacked tree."""
    return [dump["core"], "--sysroot", "sysroot", "--module-path", "bin", "--module-path", "debug"]


def windows_args(dump):
    """The same for a dump of test/dumps/windows, relative to its unpacked folder."""
    return [dump["dump"], "--module-path", "bin", "--module-path", "system32", "--module-path", "symbols"]


def dotnet_args(dump):
    """The same for a dump of test/dumps/dotnet, relative to its unpacked folder: the
    parent sysroot, then the runtime's, the app's and the extra system files
    (test/dumps/dotnet/README.md, "What the dumps lack")."""
    return [dump["core"], "--sysroot", os.path.join("..", "sysroot"), "--module-path", "runtime",
            "--module-path", "app", "--module-path", os.path.join("sysroot", "usr", "lib", "x86_64-linux-gnu")]


def all_dumps():
    """(name, working directory below the unpacked tree, arguments) of every project dump."""
    out = [(d["name"], "", stackwalk_args(d)) for d in manifest()]
    out += [("windows-" + d["name"], "windows", windows_args(d)) for d in manifest("windows")]
    out += [("dotnet-" + d["name"], "dotnet", dotnet_args(d)) for d in manifest("dotnet")]
    return out


def run_stackwalk(stackwalk, unpacked, args, check=True):
    result = subprocess.run([stackwalk] + args, cwd=unpacked, capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise RuntimeError(f"stackwalk {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def with_tail_calls_marked(oracle, kinds):
    """gdb synthesizes frames for functions that tail-called the next one (from
    DW_TAG_call_site): mark them "tailcall" as gdb-frames.py does, from gdb's frame
    kinds, so that compare.py --tailcalls looks for each in stackwalk's report."""
    by_tid = {t["tid"]: t for t in kinds["threads"]}
    for thread in oracle["threads"]:
        marks = by_tid[thread["tid"]]["frames"]
        assert len(marks) == len(thread["frames"]), "frame-kinds and gdb-frames disagree"
        for frame, mark in zip(thread["frames"], marks):
            if mark["kind"] == "tailcall":
                frame["tailcall"] = True
    return oracle


def compare(ours_path, oracle_path, *options):
    result = subprocess.run([sys.executable, COMPARE, ours_path, oracle_path, "--names", *options],
                            capture_output=True, text=True)
    return result.returncode == 0, result.stdout.strip()


def gdb_oracle(unpacked, dump, out_dir):
    """Runs gdb live on a dump (test/dumps/oracle.sh), with frame kinds."""
    name = dump["name"]
    frames = os.path.join(out_dir, name + ".gdb.json")
    kinds = os.path.join(out_dir, name + ".gdb-kinds.json")
    script = os.path.join(SOURCE, "oracle.sh")
    for path, helper in ((frames, GDB_FRAMES), (kinds, os.path.join(SOURCE, "frame-kinds.py"))):
        env = dict(os.environ, GDB_FRAMES=helper)
        subprocess.run(["sh", script, unpacked, name, path, dump["executable"]], env=env, capture_output=True,
                       timeout=300)
        if not os.path.exists(path):
            raise RuntimeError(f"gdb wrote no oracle for {name}")
    with open(frames) as f, open(kinds) as k:
        return json.load(f), json.load(k)


def eu_stack_frames(*args):
    """eu-stack's frame addresses, {tid: [address, ...]}, for its arguments (-p PID, --core CORE -e EXE)."""
    out = subprocess.run(["eu-stack", *args], capture_output=True, text=True)
    threads, current = {}, None
    for line in out.stdout.splitlines():
        if m := re.match(r"TID (\d+):", line):
            current = threads.setdefault(int(m.group(1)), [])
        elif (m := re.match(r"#\d+\s+0x([0-9a-f]+)", line)) and current is not None:
            current.append(int(m.group(1), 16))
    return threads


def script_main(main, doc, paths):
    """Runs a test script's main with its `paths` absolute path arguments, or
    prints its usage. Options (words starting with --) are passed as a set."""
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = {a for a in sys.argv[1:] if a.startswith("--")}
    if len(args) != paths:
        print(doc)
        sys.exit(2)
    sys.exit(main(*[os.path.abspath(a) for a in args], options))


def wait_until_asleep(pid, timeout=5.0, tids=None):
    """Waits until every thread of pid (or those of `tids`) is asleep (state S) on three polls
    in a row, as make-dumps.sh does before gcore: the thread that printed READY still has to
    reach its blocking call, perhaps through the dynamic linker's lazy binding. Whether they were."""
    calm, deadline = 0, time.monotonic() + timeout
    while calm < 3 and time.monotonic() < deadline:
        try:
            states = []
            for task in tids or os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/stat") as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        except OSError:
            return False
        calm = calm + 1 if all(state == "S" for state in states) else 0
        time.sleep(0.02)
    return calm >= 3


def start_parked(path, *args):
    """A test program started and parked: every thread asleep where it says (it prints READY)."""
    process = subprocess.Popen([path, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/tmp")
    for line in process.stdout:
        if line.strip() == b"READY":
            wait_until_asleep(process.pid)
            return process
    process.kill()
    raise SystemExit(f"{path} never became ready")


def failures_summary(failures, summary):
    """Prints each failure, then the summary line with their count; the exit code."""
    for failure in failures:
        print("FAIL", failure)
    print(f"{summary}, {len(failures)} failure(s)")
    return 1 if failures else 0


class Checks:
    """Named checks that print ok/FAIL and remember how many failed."""

    def __init__(self):
        self.failures = 0

    def __call__(self, ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        self.failures += not ok

    def summary(self):
        print(f"{self.failures} check(s) failed")
        return 1 if self.failures else 0


def run_in(stackwalk, args, cwd, timeout=300):
    """stackwalk with arguments in a directory, its output captured."""
    return subprocess.run([stackwalk] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def threads_gdb_gets_wrong(dump):
    """Threads whose gdb oracle is wrong by the dump's own account."""
    wrong = set()
    if "smashed_thread" in dump:
        wrong.add(dump["smashed_thread"])
    expected = dump.get("expected_return_addresses")
    if dump.get("oracle_incomplete") and isinstance(expected, dict):
        wrong |= {int(tid) for tid in expected}
    return wrong


def schema_validator():
    """A validator for schema/stackwalk-1.schema.json, with Debian's python3-jsonschema. When
    the Python running the test lacks it, the test re-runs itself under /usr/bin/python3, and
    skips if that lacks it too."""
    try:
        import jsonschema
    except ImportError:
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        skip("the jsonschema module is not installed (Debian package python3-jsonschema)")
    with open(os.path.join(ROOT, "schema", "stackwalk-1.schema.json")) as f:
        return jsonschema.Draft202012Validator(json.load(f))


def kernel_runs_i386():
    """False when the kernel refuses i386 programs (built without IA32 emulation: exec
    fails with ENOEXEC); the i386 libc's own loader is the probe. True without that libc:
    the tests that need it say so themselves."""
    loader = "/lib/ld-linux.so.2"
    if not os.path.exists(loader):
        return True
    try:
        subprocess.run([loader, "--version"], capture_output=True, timeout=60)
    except OSError:
        return False
    return True


def have_gdb():
    return shutil.which("gdb") is not None


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_url(url, seconds=30, any_status=True):
    """Until the URL answers (with any HTTP status, or only with success)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except urllib.error.HTTPError:
            if any_status:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {seconds} s")


class HttpServer:
    """python3 -m http.server over a folder on 127.0.0.1, for as long as the with block;
    `requests()` counts the GETs its log shows."""

    def __init__(self, folder, log_path):
        self.folder, self.log_path = folder, log_path

    def __enter__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self.port),
                                         "--directory", self.folder], stdout=self.log, stderr=self.log)
        wait_for_url(self.url)
        return self

    def requests(self):
        self.log.flush()
        with open(self.log_path) as f:
            return sum(1 for line in f if '"GET ' in line)

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait()
        self.log.close()
