#!/usr/bin/env python3
"""Crafted dumps (make-hostile.py) walked as an ingestion service would: each within
10 s and a 1 GiB address space (under ASan, whose shadow needs more address space and
which runs slower: no address-space cap, 150 s), each with the warning that says what
its walk left out, with text
that cannot drive a terminal, host files never opened with --no-host-files, paths
that cannot leave --sysroot, and no perf map chosen by the dump's pid.

Usage: hostile_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import functools
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import dumps  # noqa: E402

check = dumps.Checks()
HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 10
ADDRESS_SPACE = 1 << 30

# What must never reach a terminal: C0 but newline, DEL, C1 raw or in UTF-8, bidi and
# invisible format characters (as PrintableText.cpp lists them).
FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb]")

DOTNET_FILES = ["--sysroot", "../sysroot", "--module-path", "runtime", "--module-path", "app",
                "--module-path", "sysroot/usr/lib/x86_64-linux-gnu"]


@functools.lru_cache(maxsize=None)
def is_asan(stackwalk):
    with open(stackwalk, "rb") as f:
        return b"__asan_init" in f.read()


def time_limit(stackwalk):
    """10 s; an ASan build runs 3-15 times slower (100,000 threads as JSON took 40-55 s), so it gets 15 times as long."""
    return TIMEOUT_S * (15 if is_asan(stackwalk) else 1)


def capped(stackwalk, args, cwd, env=None):
    """stackwalk ARGS under the caps; (exit code or None when it timed out, stdout bytes, stderr bytes)."""
    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if not is_asan(stackwalk):
            resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    try:
        r = subprocess.run([stackwalk, *args], cwd=cwd, capture_output=True, timeout=time_limit(stackwalk),
                           preexec_fn=limits, env=env)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, b"", b""


def terminal_safe(data):
    """Whether text output could be shown on a terminal as it is (bytes not UTF-8 fail too)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not FORBIDDEN.search(text)


# The warning that says what a crafted dump's walk left out.
EXPECTED_WARNINGS = {
    "jit-claims.core": "GDB JIT: 4095 entries without a readable object file of at most 64 MiB",
    "jit-shared.core": "GDB JIT: 99 entries name an object already read",
    "jit-zstd-bomb.core": "debug info of 3 module(s) not read, over the dump's budget",
    "vdso-zstd-bomb.core": "debug info of 1 module(s) not read, over the dump's budget",
    "many-threads.core": "only the first 100000 of 100003 threads are walked",
    "deep-threads.core": "of 100000 threads not walked: the threads before them hold",
}


def check_every_dump_bounded(stackwalk, crafted, unpacked):
    for name in sorted(os.listdir(crafted)):
        cwd, extra = (os.path.join(unpacked, "dotnet"), DOTNET_FILES) if "dotnet" in name else (unpacked, [])
        for form in (["-a"], ["-a", "--json"]):
            rc, out, err = capped(stackwalk, [os.path.join(crafted, name), *form, *extra], cwd)
            check(rc == 0 and b"Sanitizer" not in err,
                  f"{name} {' '.join(form)}: walked within {time_limit(stackwalk)} s and 1 GiB (exit {rc})")
        if name in EXPECTED_WARNINGS and rc == 0:
            warnings = json.loads(out)["warnings"]
            check(any(EXPECTED_WARNINGS[name] in w for w in warnings),
                  f"{name}: warns '{EXPECTED_WARNINGS[name]}' ({[w[:100] for w in warnings]})")
    threads = os.path.join(crafted, "many-threads.core")
    rc, out, _ = capped(stackwalk, [threads, "-a", "--json", "--max-total-frames", "5000"], unpacked)
    report = json.loads(out) if rc == 0 else {"threads": [], "warnings": []}
    walked = len(report["threads"])
    check(0 < walked < 5000 and any(f"{100000 - walked} of 100000 threads not walked" in w for w in report["warnings"]),
          f"--max-total-frames 5000: the threads past the budget are left out, with a warning ({walked} walked)")
    rc, out, _ = capped(stackwalk, [threads, "-a", "--max-total-frames", "5000"], unpacked)
    check(rc == 0 and out.decode().rstrip().splitlines()[-1].startswith("warning:") and b"not walked" in out,
          "in text, that warning closes the report")
    check_deep_threads(stackwalk, crafted, unpacked)
    rc, out, _ = capped(stackwalk, [os.path.join(crafted, "pe-claims.dmp"), "--json"], unpacked)
    modules = json.loads(out)["modules"] if rc == 0 else []
    rebuilt = [m["path"] for m in modules if (m.get("note") or "").startswith("rebuilt from")]
    why = [m for m in modules if m["name"].startswith("big") and "; not rebuilt from the dump's memory: " in m["note"]]
    check(rc == 0 and rebuilt == [] and len(why) == 20,
          f"pe-claims.dmp: no PE image rebuilt from headers that claim 256 MiB, each module's note says why "
          f"({rebuilt}, {len(why)} notes)")
    rc, out, _ = capped(stackwalk, [os.path.join(crafted, "elf-claims.core"), "--json"], unpacked)
    modules = json.loads(out)["modules"] if rc == 0 else []
    claims = [m["name"] for m in modules if m["name"].startswith("big")]
    rebuilt = [m["name"] for m in modules if (m.get("note") or "").startswith("rebuilt from")]
    check(len(claims) == 24 and rebuilt == [],
          f"elf-claims.core: no ELF image rebuilt from program headers that claim 255 MiB ({len(claims)} such modules, "
          f"rebuilt: {rebuilt})")


def check_deep_threads(stackwalk, crafted, unpacked):
    """100,000 threads of 308 frames each, walked with their files: the default
    --max-total-frames bounds every form, and each form says so."""
    deep = [os.path.join(crafted, "deep-threads.core"), "-a", "--sysroot", "sysroot", "--module-path", "bin"]
    budget = "threads not walked: the threads before them hold"
    for form in (["--json"], [], ["--summary"]):
        rc, out, err = capped(stackwalk, [*deep, *form], unpacked)
        text = out.decode(errors="replace")
        warned = rc == 0 and (budget in text if form else budget in text.rstrip().splitlines()[-1])
        check(warned and b"Sanitizer" not in err,
              f"deep-threads.core {' '.join(form) or 'text'} with its files: bounded within "
              f"{time_limit(stackwalk)} s, with the budget's warning (exit {rc}, {len(out)} bytes)")


def check_batch(stackwalk, crafted, unpacked):
    """Every crafted dump in one batch with good ones: a report line for each, in order."""
    good = os.path.join(unpacked, "cores", "crash-segv.core")
    batch = [good] + [os.path.join(crafted, n) for n in sorted(os.listdir(crafted)) if "dotnet" not in n] + [good]
    r = subprocess.run([stackwalk, *batch, "--ndjson", "-a", "--untrusted", "--jobs", "2"], cwd=unpacked,
                       capture_output=True, timeout=20 * time_limit(stackwalk))
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    check(r.returncode == 0 and [d["dump"]["path"] for d in lines] == batch and all("threads" in d for d in lines),
          f"a batch of every crafted dump between two good ones: each reported, in order (exit {r.returncode})")


def check_text_escaped(stackwalk, crafted, unpacked):
    """ESC, C1 and bidi characters from thread names, module paths, the process name and
    arguments, and an exception message: every text form prints them escaped."""
    expected = {
        "escapes.core": [r"\x1b]0;PWNED-TITLE\x07\x1b[2J.so+0x14a0", r"c1-raw-\x9b31m.so",
                         r"c1-utf8-\u{009b}31m.so", r"bidi-\u{202e}os.exe", r"isolate-\u{2066}x\u{2069}.so",
                         r"del-\x7f.so"],
        "escapes.dmp": [r'"t256-\x1b]0;PWNED-THREAD\x07\x1b[31mred\x1b[0m-\u{202e}daerht" (crashed)',
                        r"stop: no_unwind_info (no PE exception directory for \x1b]0;PWNED-TITLE\x07\x1b[2J.dll: "],
        "escapes-dotnet.core": [r'"\x1b]0;PWN\x07\u{009b}31m\u{202e}evil\u{2066}x\u{2069}\x1b[2J!!"'],
    }
    for name, wanted in expected.items():
        cwd, extra = (os.path.join(unpacked, "dotnet"), DOTNET_FILES) if "dotnet" in name else (unpacked, [])
        path = os.path.join(crafted, name)
        for form in (["-a"], ["-a", "-v", "--registers"], ["--summary"]):
            rc, out, err = capped(stackwalk, [path, *form, *extra], cwd)
            check(rc == 0 and terminal_safe(out) and terminal_safe(err),
                  f"{name} {' '.join(form)}: no control or format character reaches the terminal")
            if form == ["-a"]:
                text = out.decode("utf-8", "replace")
                for piece in wanted:
                    check(piece in text, f"{name}: shown escaped: {piece}")
        rc, out, _ = capped(stackwalk, [path, "--json", *extra], cwd)
        check(rc == 0 and b"\\u001b" in out and json.loads(out),
              f"{name} --json: JSON keeps the text as the dump has it (escaped by JSON itself)")

    # A dump path and what a failure says go through the same escaping on stderr.
    with tempfile.TemporaryDirectory() as tmp:
        junk = os.path.join(tmp, "junk-\x1b[2J-\u202e.dmp")
        with open(junk, "w") as f:
            f.write("not a dump")
        for args in ([junk], [junk, junk, "--ndjson"]):
            rc, out, err = capped(stackwalk, args, unpacked)
            check(rc in (1, 3) and terminal_safe(err) and r"junk-\x1b[2J-\u{202e}.dmp" in err.decode(),
                  f"an unreadable dump's path, {len(args)} argument(s): escaped on stderr")


def notes(output):
    """Each module's note by its recorded path ({} when the output is no report)."""
    try:
        return {m["path"]: m.get("note", "") for m in json.loads(output)["modules"]}
    except (ValueError, KeyError):
        return {}


def check_host_paths(stackwalk, crafted, unpacked):
    core = os.path.join(crafted, "host-paths.core")
    rc, out, _ = capped(stackwalk, [core, "--json", "--no-host-files"], unpacked)
    found = notes(out)
    # After "no file found" a note may say why the dump's memory gave no image either.
    looked_up = {path: note for path, note in found.items()
                 if note != "copied from the dump's memory" and note.split(";")[0] != "no file found"}
    check(rc == 0 and found and not looked_up, f"--no-host-files: no recorded path is looked up on the host ({looked_up})")
    rc, out, _ = capped(stackwalk, [core, "--json"], unpacked)
    found = notes(out)
    check(all(found.get(path, "").split(";")[0] == "no file found" for path in ("/proc/self/mem", "/proc/self/environ")),
          "without it too, files of /proc (not regular, or empty) are never read")

    with tempfile.TemporaryDirectory() as sysroot:
        os.makedirs(os.path.join(sysroot, "etc"))
        with open(os.path.join(sysroot, "etc", "passwd"), "w") as f:
            f.write("inside the sysroot\n")
        rc, out, _ = capped(stackwalk, [core, "--json", "--sysroot", sysroot], unpacked)
        note = notes(out).get("/../../../../etc/passwd", "")
        # The file was looked at there (a data file, so noted as one), and nowhere else.
        check(f": {sysroot}/etc/passwd (" in note and note.count("/etc/passwd") == 1,
              f"'..' in a recorded path stays inside --sysroot ({note})")


def make_traps(trap_dir, unpacked):
    """What traps.core names: a FIFO (opening it would block), a secret, /proc/self/mem,
    and a real libc (which a host lookup would use)."""
    os.makedirs(os.path.join(trap_dir, "sub"))
    os.mkfifo(os.path.join(trap_dir, "fifo"))
    with open(os.path.join(trap_dir, "shadow"), "w") as f:
        f.write("root:secret-hash:19000:0:99999:7:::\n")
    with open(os.path.join(trap_dir, "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    os.symlink("/proc/self/mem", os.path.join(trap_dir, "mem"))
    shutil.copy(os.path.join(unpacked, "sysroot", "usr", "lib", "x86_64-linux-gnu", "libc.so.6"),
                os.path.join(trap_dir, "libc.so.6"))


def check_traps(stackwalk, unpacked):
    """--no-host-files: traps.core's report is the same whether its files exist or not,
    and (with strace) none of them is opened."""
    with tempfile.TemporaryDirectory() as tmp:
        trap_dir = os.path.join(tmp, "trap-dir")
        subprocess.run([sys.executable, os.path.join(HERE, "make-hostile.py"), unpacked, tmp, "--traps", trap_dir],
                       check=True)
        core = os.path.join(tmp, "traps.core")
        args = [core, "-a", "--json", "--no-host-files"]
        absent = capped(stackwalk, args, unpacked)
        make_traps(trap_dir, unpacked)
        present = capped(stackwalk, args, unpacked)
        check(absent[0] == 0 and present[0] == 0 and absent[1] == present[1],
              "--no-host-files: the same report whether the recorded files exist or not")
        rc, out, _ = capped(stackwalk, [core, "--json"], unpacked)
        check(rc == 0, "without --no-host-files, a FIFO at a recorded path does not block the walk")
        if not shutil.which("strace"):
            print("(strace is not installed: the opened files are not traced)")
            return
        trace = os.path.join(tmp, "trace")
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=%file", "-o", trace, stackwalk, *args],
                       cwd=unpacked, capture_output=True, timeout=60)
        with open(trace) as f:
            touched = [line.strip() for line in f if trap_dir in line and "execve" not in line]
        check(not touched, f"--no-host-files: no file in the trap directory is even looked at ({touched[:3]})")


def check_perf_map_not_by_pid(stackwalk, unpacked):
    """/tmp/perf-PID.map here belongs to whoever has that pid on this machine."""
    core = "cores/crash-segv.core"
    pid = json.loads(capped(stackwalk, [core, "--json"], unpacked)[1])["dump"]["pid"]
    path = f"/tmp/perf-{pid}.map"
    if os.path.exists(path):
        print(f"({path} exists: not replaced)")
        return
    os.mkfifo(path)
    try:
        rc, out, _ = capped(stackwalk, [core, "-a"], unpacked)
        check(rc == 0 and b"perf" not in out, "a FIFO at /tmp/perf-PID.map is neither read nor waited for")
    finally:
        os.unlink(path)
    # A host process's map naming the code at 0, where crash-callnull's first frame is (outside
    # every module: what a perf map names); given with --perf-map, it would name that frame.
    callnull = "cores/crash-callnull.core"
    path = f"/tmp/perf-{json.loads(capped(stackwalk, [callnull, '--json'], unpacked)[1])['dump']['pid']}.map"
    if os.path.exists(path):
        print(f"({path} exists: not replaced)")
        return
    with open(path, "w") as f:
        f.write("0 10 HOST_SECRET_JIT_FUNCTION\n")
    try:
        rc, out, _ = capped(stackwalk, [callnull, "-a"], unpacked)
        given = capped(stackwalk, [callnull, "-a", "--perf-map", path], unpacked)[1]
        check(rc == 0 and b"HOST_SECRET" not in out and b"HOST_SECRET" in given,
              "a host's /tmp/perf-PID.map names no frame of the dump (given with --perf-map, it would)")
    finally:
        os.unlink(path)


def main(stackwalk, unpacked, options):
    with tempfile.TemporaryDirectory() as crafted:
        subprocess.run([sys.executable, os.path.join(HERE, "make-hostile.py"), unpacked, crafted], check=True)
        check_every_dump_bounded(stackwalk, crafted, unpacked)
        check_batch(stackwalk, crafted, unpacked)
        check_text_escaped(stackwalk, crafted, unpacked)
        check_host_paths(stackwalk, crafted, unpacked)
    check_traps(stackwalk, unpacked)
    check_perf_map_not_by_pid(stackwalk, unpacked)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
