#!/usr/bin/env python3
"""A Go program whose goroutines are asleep in C (cgo calls), built here with Debian's Go, caught
by gdb's gcore, then made to print its own traceback (SIGQUIT, GOTRACEBACK=system): behind
each thread's C frames, from runtime.asmcgocall on, stackwalk must give the functions of one
goroutine in a cgo call, as Go's traceback lists them, and every such goroutine once.

Usage: go_cgo_test.py STACKWALK

C code called from Go runs on the thread's system stack; the goroutine's frames lie on its own
stack, which only what asmcgocall saved leads back to (gdb walks garbage there). Skipped
without Go, gcc, gdb or gcore.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import cross_arch
import dumps

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dumps", "programs", "go-cgo")


def build(tmp):
    """The program, built in tmp with a Go cache of its own."""
    env = dict(os.environ, CGO_ENABLED="1", GOCACHE=os.path.join(tmp, "cache"), GOPATH=os.path.join(tmp, "gopath"),
               GOFLAGS="-mod=mod", GOTOOLCHAIN="local", HOME=tmp)
    source = os.path.join(tmp, "src")
    shutil.copytree(PROGRAM, source)
    executable = os.path.join(tmp, "go-cgo")
    subprocess.run(["go", "build", "-o", executable, "."], cwd=source, env=env, check=True, capture_output=True,
                   timeout=600)
    return executable


def capture(executable, tmp):
    """(core, Go's traceback text) of the program once every thread is asleep."""
    traceback = os.path.join(tmp, "traceback.txt")
    with open(traceback, "w") as err:
        process = subprocess.Popen([executable], stdout=subprocess.DEVNULL, stderr=err,
                                   env=dict(os.environ, GOTRACEBACK="system"))
    try:
        time.sleep(0.3)
        if not dumps.wait_until_asleep(process.pid):
            raise SystemExit("the Go program's threads were not all asleep")
        prefix = os.path.join(tmp, "go-cgo")
        subprocess.run(["gcore", "-o", prefix, str(process.pid)], capture_output=True, check=True, timeout=60)
        process.send_signal(signal.SIGQUIT)
        process.wait(timeout=30)
    finally:
        process.kill()
        process.wait()
    with open(traceback) as f:
        return f"{prefix}.{process.pid}", f.read()


def goroutines_in_cgo(traceback):
    """Each goroutine in a cgo call ([syscall], from runtime.cgocall): its functions, innermost first."""
    found = []
    for block in traceback.split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or not re.match(r"goroutine \d+ \[syscall", lines[0]):
            continue
        names = [re.sub(r"\(.*\)$", "", line) for line in lines[1:] if line and not line[0].isspace()]
        names = [n for n in names if not n.startswith("created by ")]
        if names and names[0] == "runtime.cgocall":
            found.append(names)
    return found


def behind_c(report):
    """Each thread's frames after runtime.asmcgocall's, where it has one."""
    found = []
    for thread in report["threads"]:
        names = [frame["function"] for frame in thread["frames"]]
        if "runtime.asmcgocall" in names:
            found.append(thread["frames"][names.index("runtime.asmcgocall") + 1:])
    return found


def main(stackwalk, options):
    missing = [tool for tool in ("go", "gcc", "gdb", "gcore") if not shutil.which(tool)]
    if missing:
        dumps.skip("not installed: " + " ".join(missing))
    with tempfile.TemporaryDirectory(prefix="stackwalk-go-") as tmp:
        executable = build(tmp)
        core, traceback = capture(executable, tmp)
        report = cross_arch.stackwalk_report(stackwalk, core, executable)
    behind = behind_c(report)
    expected, walked = goroutines_in_cgo(traceback), [[frame["function"] for frame in frames] for frames in behind]
    failures = []
    if len(expected) != 2:
        failures.append(f"Go's traceback lists {len(expected)} goroutines in a cgo call, not the program's 2")
    if sorted(walked) != sorted(expected):
        failures.append(f"behind C: {walked}, Go's traceback: {expected}")
    trusts = [frames[0]["trust"] for frames in behind if frames]
    if any(trust != "runtime_frame" for trust in trusts):
        failures.append(f"the goroutine's first frame found by {trusts}, not by what asmcgocall saved")
    for names in walked:
        print(f"{'ok  ' if names in expected else 'FAIL'} behind C: {' <- '.join(names)}")
    return dumps.failures_summary(failures, f"{len(walked)} goroutines behind C, {sum(map(len, walked))} frames "
                                            "compared with Go's traceback")


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
