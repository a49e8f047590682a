#!/usr/bin/env python3
"""arm64 Linux cores walked as eu-stack walks them (issue 22).

Usage: arm64_test.py STACKWALK

The test programs (cross_arch.py) are built for arm64 (Debian's cross compilers)
and run under qemu-aarch64, which writes the guest's ELF core: it has no NT_FILE
note and no ELF header page of any module, so stackwalk places the executable by
its entry point (-e) and finds the libraries through the link map. Frames are
compared with eu-stack (reading the arm64 libraries from their multiarch paths)
and gdb-multiarch, as cross_arch.py says. qemu-user gives arm64 guests a signal
trampoline without CFI, where eu-stack goes wrong and gdb-multiarch never returns:
sigcontext's thread in a handler is checked against the program's own record past
it. A program built with pointer authentication (return addresses signed on the
stack) must give the functions of its unsigned twin, which neither tool can check.
A wrong executable given with -e is refused (its dynamic section differs). Each core
walked with its executable alone (no library file) gives no frame the walk with
them lacks.
Some of the cores are also written as Linux arm64 minidumps (core_to_minidump.py:
CONTEXT_ARM64, modules from the link map, stacks, no code bytes) and walked with
only the .sym files Breakpad's dump_syms makes of their modules: each thread's
frames must be those of Breakpad's minidump_stackwalk with the same files and
have the instruction pointers of the core's walk.

Skipped (77) without the cross compilers, qemu-user, eu-stack, gdb-multiarch or the arm64 libc.
"""
import json
import os
import subprocess
import sys

import breakpad_symbols_test
import core_to_minidump
import cross_arch

ARM64 = cross_arch.Platform(name="arm64", triplet="aarch64-linux-gnu", libc="/lib/aarch64-linux-gnu/libc.so.6",
                            gdb="gdb-multiarch", runner=["qemu-aarch64"], place_executable=True,
                            gdb_loops=frozenset({"sigcontext"}), tools_stop_at_trampoline=True)

PROGRAMS = cross_arch.PROGRAMS + [("crash-segv-pac", "crash-segv.c", "-O2 -g -mbranch-protection=standard", "crash")]
# Programs built with pointer authentication (qemu's default cpu signs return
# addresses): neither eu-stack nor gdb-multiarch walks past a signed one
# without the NT_ARM_PAC_MASK note qemu does not write, so such a program is
# checked against its unsigned twin: each thread's functions, in order.
PAC_TWIN = {"crash-segv-pac": "crash-segv"}


def pac_twin(name, report, reports, eu_stack):
    """A signed program: the functions of its unsigned twin (None for the others)."""
    if name not in PAC_TWIN:
        return None
    failures = []
    signed = [a for frames in eu_stack.values() for a in frames if a >> 48]
    if not signed:
        failures.append(f"{name}: eu-stack shows no signed return address: pointer authentication is not exercised")
    ours = cross_arch.functions(report, name)
    theirs = cross_arch.functions(reports[PAC_TWIN[name]], PAC_TWIN[name])
    if ours != theirs:
        failures.append(f"{name}: {ours} vs its unsigned twin's {theirs}")
    print(f"{'ok  ' if not failures else 'FAIL'} {name}: the functions of its unsigned twin")
    return failures


# The cores also walked as minidumps with .sym files (one of each kind of stack).
MINIDUMPS = ["threads-O0-fp", "threads-O2-nofp", "recursion-alloca", "cxx-throw", "crash-segv", "crash-abort"]


def minidump_failures(stackwalk, tools, made, core, exe):
    """One core as a minidump walked with its modules' .sym files only (made once
    for all cores: `made`), against Breakpad's walk with the same files and the core's own walk."""
    name, workdir = os.path.basename(exe), os.path.dirname(core)
    minidump, store = os.path.join(workdir, f"{name}.dmp"), os.path.join(workdir, "symbols")
    core_to_minidump.write(core, minidump, ["/"], exe)
    for _, _, path, _ in core_to_minidump.modules(core_to_minidump.Core(core), ["/"], exe):
        breakpad_symbols_test.make_symbols(tools[0], path, "/usr/lib/debug", store, made)
    out = subprocess.run([stackwalk, minidump, "-a", "--json", "--symbols-path", store, "--no-host-files"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return [f"{name}.dmp: stackwalk exited {out.returncode}: {out.stderr.strip()}"]
    ours, failures = json.loads(out.stdout), []
    if not all(m["symbols"] == "breakpad" and m["file"] is None for m in ours["modules"]):
        failures.append(f"{name}.dmp: a module not named by its .sym file alone")
    theirs = breakpad_symbols_test.breakpad_frames(tools[1], minidump, store)
    core_walk = cross_arch.stackwalk_report(stackwalk, core, exe)
    lacks, past = 0, 0
    for index, (thread, core_thread) in enumerate(zip(ours["threads"], core_walk["threads"])):
        unnamed = {int(f["ip"], 16) for f in cross_arch.physical(core_thread) if not f["function"]}
        mine = breakpad_symbols_test.unnamed_as_truth(thread, unnamed)
        lacking, beyond = breakpad_symbols_test.align(mine, theirs.get(index, []))
        lacks, past = lacks + len(lacking), past + len(beyond)
        if any(frame in lacking for frame in beyond) or not mine:
            failures.append(f"{name}.dmp thread {thread['tid']}: ours {mine}\n  breakpad {theirs.get(index)}")
        ips = [f["ip"] for f in cross_arch.physical(thread)]
        if ips != [f["ip"] for f in cross_arch.physical(core_thread)]:
            failures.append(f"{name}.dmp thread {thread['tid']}: {ips}, not the core walk's instruction pointers")
    frames = sum(len(cross_arch.physical(t)) for t in ours["threads"])
    print(f"{'ok  ' if not failures else 'FAIL'} {name}.dmp with .sym files: {frames} frames as Breakpad's "
          f"(it lacks {lacks} of them, and walks {past} past ours), the core walk's ips")
    return failures


def without_libraries_and_minidumps(stackwalk, cores):
    return cross_arch.without_libraries_failures(stackwalk, cores) + breakpad_minidumps(stackwalk, cores)


def breakpad_minidumps(stackwalk, cores):
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    if not tools:
        print("skip Linux arm64 minidumps: Breakpad's dump_syms and minidump_stackwalk could not be had")
        return []
    made = set()
    return [f for name in MINIDUMPS for f in minidump_failures(stackwalk, tools, made, *cores[name])]


if __name__ == "__main__":
    sys.exit(cross_arch.run(ARM64, os.path.abspath(sys.argv[1]), cross_arch.qemu_capture(ARM64), PROGRAMS, pac_twin,
                            last=without_libraries_and_minidumps))
