"""Cores of another architecture written as Linux minidumps and walked with Breakpad
symbol files only: what arm64_test.py and i386_test.py share.

Some of a platform's cores (MINIDUMPS: one of each kind of stack) are written as
minidumps (core_to_minidump.py: the modules from the link map, the stacks, no code
bytes) and walked with only the .sym files Breakpad's dump_syms makes of their
modules. Each thread's frames must be those of Breakpad's minidump_stackwalk with
the same files (a frame Breakpad lacks is a failure), and have the instruction
pointers of the core's walk, up to a frame whose CFI a .sym file cannot hold
(Platform.sym_cfi_lacks): past it both walkers know only what the .sym files say,
and the frames there must be Breakpad's.
"""
import json
import os
import subprocess

import breakpad_symbols_test
import core_to_minidump
import cross_arch

MINIDUMPS = ["threads-O0-fp", "threads-O2-nofp", "recursion-alloca", "cxx-throw", "crash-segv", "crash-abort"]


def split_at_sym_cfi_gap(platform, thread):
    """The thread's physical frames up to and including the first whose function's CFI the
    .sym files lack (Platform.sym_cfi_lacks), and those past it."""
    frames = cross_arch.physical(thread)
    for index, frame in enumerate(frames):
        if frame["function"] in platform.sym_cfi_lacks:
            return frames[:index + 1], frames[index + 1:]
    return frames, []


def minidump_failures(platform, stackwalk, tools, made, core, exe):
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
    lacks, past, only_sym = 0, 0, 0
    for index, (thread, core_thread) in enumerate(zip(ours["threads"], core_walk["threads"])):
        unnamed = {int(f["ip"], 16) for f in cross_arch.physical(core_thread) if not f["function"]}
        mine = breakpad_symbols_test.unnamed_as_truth(thread, unnamed)
        lacking, beyond = breakpad_symbols_test.align(mine, theirs.get(index, []))
        lacks, past = lacks + len(lacking), past + len(beyond)
        if any(frame in lacking for frame in beyond) or not mine:
            failures.append(f"{name}.dmp thread {thread['tid']}: ours {mine}\n  breakpad {theirs.get(index)}")
        compared, past_gap = split_at_sym_cfi_gap(platform, thread)
        only_sym += len(past_gap)
        ips, core_ips = [f["ip"] for f in compared], [f["ip"] for f in cross_arch.physical(core_thread)]
        if ips != (core_ips[:len(ips)] if past_gap else core_ips):
            failures.append(f"{name}.dmp thread {thread['tid']}: {ips}, not the core walk's instruction pointers")
        past_as_named = breakpad_symbols_test.our_frames({"frames": past_gap})
        not_breakpads = [f["ip"] for f, named in zip(past_gap, past_as_named) if named in lacking]
        if not_breakpads:
            failures.append(f"{name}.dmp thread {thread['tid']}: past the frame whose CFI the .sym files lack, "
                            f"frames Breakpad does not have: {not_breakpads}")
    frames = sum(len(cross_arch.physical(t)) for t in ours["threads"])
    print(f"{'ok  ' if not failures else 'FAIL'} {name}.dmp with .sym files: {frames} frames as Breakpad's "
          f"(it lacks {lacks} of them, and walks {past} past ours), the core walk's ips"
          + (f" up to {'/'.join(platform.sym_cfi_lacks)} ({only_sym} frames past it as Breakpad's)" if only_sym else ""))
    return failures


def breakpad_minidumps(platform, stackwalk, cores):
    """Each of MINIDUMPS' cores ({name: (core, exe)}) as a minidump: its failures."""
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    if not tools:
        print(f"skip Linux {platform.name} minidumps: Breakpad's dump_syms and minidump_stackwalk could not be had")
        return []
    made = set()
    return [f for name in MINIDUMPS for f in minidump_failures(platform, stackwalk, tools, made, *cores[name])]
