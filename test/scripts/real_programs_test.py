#!/usr/bin/env python3
"""Programs nobody here wrote, as Debian ships them (stripped, their debug info absent), each
caught by gdb's gcore while every thread is asleep in a system call.

Usage: real_programs_test.py STACKWALK

Each core is walked as it is: every thread's frames equal gdb's on the same core (the
program's own frames' names too, where gdb has them). Then walked again with the executable
alone (cross_arch.without_libraries_failures): no frame the walk with every file lacks.
What these caught, in an oracle sweep of 23 such programs: sort and gdb walked without
libc took main's address, which __libc_start_main keeps, after a cold fragment's call to
abort; perl blocked in its SIGALRM handler crosses a signal frame whose restorer is libc's.
What is not checked, and why: STALE_WITHOUT_LIBRARIES.
And each core written as a minidump (no code, no file) and walked with nothing but the
.sym files Breakpad's dump_syms makes of its modules (the programs' STACK CFI from
.eh_frame, libc's from its debug file too), as a crash pipeline with a Breakpad symbol
store walks it: gdb's frames again (not checked when Breakpad's tools cannot be had).

Skipped without gdb, gcore or any of the programs.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import breakpad_symbols_test
import cross_arch
import dumps

# Threads asleep in different places: time.sleep, a lock, a queue, the main thread joining.
PYTHON_THREADS = """
import queue, threading, time
lock = threading.Lock(); lock.acquire()
waiting = queue.Queue()
for work in (lambda: time.sleep(100), lock.acquire, waiting.get):
    threading.Thread(target=work, daemon=True).start()
threading.Event().wait(100)
"""
# perl's handler (unsafe signals: it runs inside the kernel's signal frame) blocks in select.
PERL_HANDLER = "$SIG{ALRM} = sub { select(undef, undef, undef, 100) }; alarm 1; select(undef, undef, undef, 100)"

# Walks without the library files that take a stale return address nothing local refutes:
# not checked, and why.
STALE_WITHOUT_LIBRARIES = {
    "gdb": "a static constructor's return address (condition_variable's, called from __libc_start_main's "
           "initialisers) lies in __libc_start_call_main's frame, and its CFI leads back to __libc_start_main's "
           "return address: in most runs the scan takes it (libc's code, which would show the frame, is absent)",
}

# (name, command, environment, seconds to wait before the threads are where they block)
PROGRAMS = [
    ("python3", ["/usr/bin/python3", "-c", PYTHON_THREADS], {}, 0.3),
    ("perl", ["perl", "-e", PERL_HANDLER], {"PERL_SIGNALS": "unsafe"}, 1.3),
    ("sort", ["sort"], {}, 0.2),  # reading its standard input, which the test holds open
    ("gdb", ["gdb", "-batch", "-nx", "-ex", "python import time; time.sleep(100)"], {}, 0.5),
]


def capture(command, env, settle, tmp, name):
    """(core, executable) of the program started asleep, or None when it could not be caught."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, **env), cwd=tmp)
    try:
        time.sleep(settle)
        if not dumps.wait_until_asleep(process.pid):
            return None
        executable = os.readlink(f"/proc/{process.pid}/exe")
        prefix = os.path.join(tmp, name)
        subprocess.run(["gcore", "-o", prefix, str(process.pid)], capture_output=True, check=True, timeout=60)
        return f"{prefix}.{process.pid}", executable
    finally:
        process.kill()
        process.wait()


def symbol_files_failures(stackwalk, tools, core, executable, gdb, tmp, made):
    """The core as a minidump (no code, no module file) walked with the .sym files
    Breakpad's dump_syms makes of the program and its libraries (their STACK CFI
    from .eh_frame, and libc's debug file under /usr/lib/debug): gdb's frames."""
    name = os.path.basename(core)
    minidump, store = os.path.join(tmp, name + ".dmp"), os.path.join(tmp, "symbols")
    breakpad_symbols_test.minidump_with_symbols(tools[0], core, minidump, ["/"], "/usr/lib/debug", store, made)
    walk = subprocess.run([stackwalk, minidump, "--all-threads", "--json", "--symbols-path", store, "--no-host-files"],
                          capture_output=True, text=True, timeout=120)
    if walk.returncode != 0:
        return [f"{name} from .sym files: stackwalk exited {walk.returncode}: {walk.stderr}"], 0
    report = json.loads(walk.stdout)
    unnamed = [m["name"] for m in report["modules"] if m["symbols"] != "breakpad" or m["file"] is not None]
    found, compared = cross_arch.compare_with_gdb(os.path.basename(executable), report, gdb)
    return found + ([f"{name}: modules not named by their .sym file alone: {unnamed}"] if unnamed else []), compared


def main(stackwalk, options):
    missing = [t for t in ("gdb", "gcore", "perl", "sort", "/usr/bin/python3") if not shutil.which(t)]
    if missing:
        dumps.skip("not installed: " + " ".join(missing))
    failures, frames, cores = [], 0, {}  # cores: those checked without their libraries
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    made = set()  # the .sym files made, shared by the programs
    with tempfile.TemporaryDirectory(prefix="stackwalk-real-") as tmp:
        for name, command, env, settle in PROGRAMS:
            caught = capture(command, env, settle, tmp, name)
            if not caught:
                failures.append(f"{name}: its threads were not all asleep, no core")
                continue
            core, executable = caught
            cores[name] = caught
            report = cross_arch.stackwalk_report(stackwalk, core, executable)
            program = os.path.basename(executable)
            gdb = cross_arch.gdb_frames(cross_arch.NATIVE, core, executable, tmp)
            found, compared = cross_arch.compare_with_gdb(program, report, gdb)
            failures += found
            frames += compared
            print(f"{'ok  ' if not found else 'FAIL'} {name} ({executable}): {len(report['threads'])} threads, "
                  f"{compared} frames as gdb's")
            if not tools:
                print(f"     {name} from .sym files: not checked (Breakpad's tools could not be had)")
                continue
            found, compared = symbol_files_failures(stackwalk, tools, core, executable, gdb, tmp, made)
            failures += found
            print(f"{'ok  ' if not found else 'FAIL'} {name} as a minidump with .sym files only: {compared} frames "
                  f"as gdb's")
        for name, why in STALE_WITHOUT_LIBRARIES.items():
            if cores.pop(name, None):
                print(f"     {name} without its libraries: not checked: {why}")
        failures += cross_arch.without_libraries_failures(stackwalk, cores)
    return dumps.failures_summary(failures, f"{len(PROGRAMS)} programs, {frames} frames compared with gdb")


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
