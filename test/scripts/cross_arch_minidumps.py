"""Cores of another architecture written as Linux minidumps and walked with Breakpad
symbol files only: what arm64_test.py and i386_test.py share.

Some of a platform's cores (MINIDUMPS: one of each kind of stack) are written as
minidumps (core_to_minidump.py: the modules from the link map and the vDSO, the
stacks, the auxiliary vector, no code bytes) and walked with only the .sym files
Breakpad's dump_syms makes of their modules (of the vDSO from the core's copy). Each
thread's frames must have the instruction pointers of the core's walk, and be those of
Breakpad's minidump_stackwalk with the same files (a frame Breakpad lacks is a failure)
up to a frame past which Breakpad goes wrong (Platform.breakpad_wrong_past): Breakpad's
frames past it are counted, not compared.
"""
import json
import os
import subprocess

import breakpad_symbols_test
import core_to_minidump
import cross_arch

MINIDUMPS = ["threads-O0-fp", "threads-O2-nofp", "recursion-alloca", "cxx-throw", "crash-segv", "crash-abort"]


def up_to_breakpad_gap(platform, frames, function):
    """The frames up to and including the first whose function (`function(frame)`)
    Breakpad walks past wrongly (Platform.breakpad_wrong_past); all when none is."""
    for index, frame in enumerate(frames):
        if isinstance(function(frame), str) and function(frame) in platform.breakpad_wrong_past:
            return frames[:index + 1]
    return frames


def minidump_failures(platform, stackwalk, tools, made, core, exe):
    """One core as a minidump walked with its modules' .sym files only (made once
    for all cores: `made`), against Breakpad's walk with the same files and the core's own walk."""
    name, workdir = os.path.basename(exe), os.path.dirname(core)
    minidump, store = os.path.join(workdir, f"{name}.dmp"), os.path.join(workdir, "symbols")
    # The vDSO too, as Breakpad's writer lists it, with a .sym made from the core's copy of it: an
    # i386 thread waiting in a system call stops in its __kernel_vsyscall, whose frame only its CFI
    # describes (where the CPU enters the kernel by SYSCALL, AMD's, %ebp holds %ecx there).
    vdso = os.path.join(workdir, "linux-gate.so")
    core_to_minidump.write(core, minidump, ["/"], exe, vdso_path=vdso)
    for _, _, path, _ in core_to_minidump.modules(core_to_minidump.Core(core), ["/"], exe):
        breakpad_symbols_test.make_symbols(tools[0], path, "/usr/lib/debug", store, made)
    if os.path.exists(vdso):
        breakpad_symbols_test.make_symbols(tools[0], vdso, "/usr/lib/debug", store, made)
    out = subprocess.run([stackwalk, minidump, "-a", "--json", "--symbols-path", store, "--no-host-files"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return [f"{name}.dmp: stackwalk exited {out.returncode}: {out.stderr.strip()}"]
    ours, failures = json.loads(out.stdout), []
    if not all(m["symbols"] == "breakpad" and m["file"] is None for m in ours["modules"]):
        failures.append(f"{name}.dmp: a module not named by its .sym file alone")
    theirs = breakpad_symbols_test.breakpad_frames(tools[1], minidump, store)
    core_walk = cross_arch.stackwalk_report(stackwalk, core, exe)
    lacks, past, wrong = 0, 0, 0
    for index, (thread, core_thread) in enumerate(zip(ours["threads"], core_walk["threads"])):
        unnamed = {int(f["ip"], 16) for f in cross_arch.physical(core_thread) if not f["function"]}
        mine = breakpad_symbols_test.unnamed_as_truth(thread, unnamed)
        theirs_all = theirs.get(index, [])
        mine_compared = up_to_breakpad_gap(platform, mine, lambda f: f[1])
        theirs_compared = up_to_breakpad_gap(platform, theirs_all, lambda f: f[1])
        lacking, beyond = breakpad_symbols_test.align(mine_compared, theirs_compared)
        lacks, past = lacks + len(lacking), past + len(beyond)
        wrong += sum(1 for f in theirs_all[len(theirs_compared):] if f not in mine[len(mine_compared):])
        if any(frame in lacking for frame in beyond) or not mine:
            failures.append(f"{name}.dmp thread {thread['tid']}: ours {mine}\n  breakpad {theirs.get(index)}")
        ips, core_ips = ([f["ip"] for f in cross_arch.physical(t)] for t in (thread, core_thread))
        if ips != core_ips:
            failures.append(f"{name}.dmp thread {thread['tid']}: {ips}, not the core walk's instruction pointers "
                            f"{core_ips}")
    frames = sum(len(cross_arch.physical(t)) for t in ours["threads"])
    gap = "/".join(platform.breakpad_wrong_past)
    print(f"{'ok  ' if not failures else 'FAIL'} {name}.dmp with .sym files: {frames} frames, the core walk's ips, "
          f"as Breakpad's{f' up to {gap}' if gap else ''} (it lacks {lacks} of them, and walks {past} past ours)"
          + (f"; past {gap} {wrong} of Breakpad's frames are none of ours" if gap else ""))
    return failures


def breakpad_minidumps(platform, stackwalk, cores):
    """Each of MINIDUMPS' cores ({name: (core, exe)}) as a minidump: its failures."""
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    if not tools:
        print(f"skip Linux {platform.name} minidumps: Breakpad's dump_syms and minidump_stackwalk could not be had")
        return []
    made = set()
    return [f for name in MINIDUMPS for f in minidump_failures(platform, stackwalk, tools, made, *cores[name])]
