"""Cores walked with copies of their module files whose unwind tables are gone.

Every file a walk read (each module's file and separate debug file) is copied
under a new root, at the path the dump records for it (debug files at
usr/lib/debug/.build-id/xx/rest.debug), and the bytes of its .eh_frame,
.eh_frame_hdr and .debug_frame are zeroed: the same files (build-ids, symbols,
code) without CFI, as musl's libc and programs built with
-fno-asynchronous-unwind-tables come. The walk with the copies alone
(--sysroot ROOT --no-host-files) finds frames by analysing each function's
instructions from its symbol's start (CodeAnalysisUnwinder), the fallbacks after
it, and is compared with the walk with the real files. Used by code_analysis_test
(the project's x86-64 cores) and i386_test (its i386 programs' cores).
"""
import json
import os
import shutil
import struct
import subprocess

import cross_arch

CFI_SECTIONS = {b".eh_frame", b".eh_frame_hdr", b".debug_frame"}
SHT_NOBITS = 8


def zero_cfi(path):
    """Zeroes the CFI sections' bytes of a little-endian ELF file in place; how many."""
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        if data[:4] != b"\x7fELF" or data[5] != 1 or data[4] not in (1, 2):
            return 0
        if data[4] == 2:  # ELF64: e_shoff at 0x28; section headers name, type, flags, addr, offset, size
            shoff, = struct.unpack_from("<Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
            header = "<IIQQQQ"
        else:
            shoff, = struct.unpack_from("<I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2e)
            header = "<IIIIII"
        headers = [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)]
        names_at = headers[shstrndx][4]
        zeroed = 0
        for name, kind, _, _, offset, size in headers:
            section = bytes(data[names_at + name:data.index(0, names_at + name)])
            if section in CFI_SECTIONS and kind != SHT_NOBITS:
                data[offset:offset + size] = bytes(size)
                zeroed += 1
        f.seek(0)
        f.write(data)
    return zeroed


def _copy(source, root, path):
    target = os.path.join(root, path.lstrip("/"))
    if os.path.exists(target):
        return target, 0
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(source, target)
    return target, zero_cfi(target)


def copy_without_cfi(report, exe, root):
    """The files of a walk's report (absolute `file` paths) copied under root and zeroed: the
    copy of `exe` and how many sections were zeroed."""
    executable, zeroed = None, 0
    for module in report["modules"]:
        if module.get("file") and module["path"].startswith("/"):
            copy, count = _copy(module["file"], root, module["path"])
            if os.path.samefile(module["file"], exe):
                executable = copy
            zeroed += count
        if module.get("debug_file") and module.get("build_id"):
            bid = module["build_id"]
            zeroed += _copy(module["debug_file"], root, f"usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug")[1]
    if not executable:
        executable, count = _copy(exe, root, os.path.abspath(exe))
        zeroed += count
    return executable, zeroed


def failures(stackwalk, cores, root, ends_early, scan_guesses, full_args=()):
    """Each core (name -> (core, exe)) walked with the real files (`full_args` added) and with
    zeroed copies under root. No thread may have a frame the walk with CFI lacks, but in the
    cores `scan_guesses` lists (name -> why), where only the scan's may be (past a function
    no symbol names, nothing but the scan is left); each thread's frames are the walk's with
    CFI, but in the cores `ends_early` lists. Both lists must be as they are. Returns
    (failures, frames past the first in the walks with CFI, frames the analysis found)."""
    found, short, guessed, frames, analysed, zeroed = [], set(), set(), 0, 0, 0
    for name, (core, exe) in sorted(cores.items()):
        truth = cross_arch.stackwalk_report(stackwalk, core, exe, *full_args)
        copy, count = copy_without_cfi(truth, exe, root)
        zeroed += count
        out = subprocess.run([stackwalk, core, "-e", copy, "--all-threads", "--json", "--sysroot", root,
                              "--no-host-files"], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            found.append(f"{name} without CFI: exit {out.returncode}: {out.stderr.strip()}")
            continue
        for ours, theirs in zip(json.loads(out.stdout)["threads"], truth["threads"]):
            got = [f["ip"] for f in cross_arch.physical(ours)]
            want = [f["ip"] for f in cross_arch.physical(theirs)]
            remaining = iter(want)
            invented = [f for f in cross_arch.physical(ours) if f["ip"] not in want]
            if name in scan_guesses and invented and all(f["trust"] == "scan" for f in invented):
                guessed.add(name)
                print(f"     {name} thread {ours['tid']} without CFI: the scan's {[f['ip'] for f in invented]}")
            elif not all(ip in remaining for ip in got):
                found.append(f"{name} thread {ours['tid']} without CFI: {got}, not in order among the walk's "
                             f"with CFI: {want}")
            if got != want and all(ip in want for ip in got):
                short.add(name)
                print(f"     {name} thread {ours['tid']} without CFI: {len(got)} of {len(want)} frames")
            frames += len(want) - 1
            analysed += sum(f["trust"] == "code_analysis" for f in cross_arch.physical(ours))
    for listed, seen, what in ((ends_early, short, "a thread that ends early"),
                               (scan_guesses, guessed, "the scan's guesses")):
        if seen != set(listed):
            found.append(f"without CFI, cores with {what}: {sorted(seen)}; expected {sorted(listed)}")
    described = lambda listed: "; ".join(f"{k}: {v}" for k, v in listed.items()) or "none"
    print(f"{'ok  ' if not found else 'FAIL'} without CFI ({zeroed} sections zeroed): no invented frame but the "
          f"scan's ({described(scan_guesses)}), every thread as with CFI but where it ends early "
          f"({described(ends_early)}); {analysed} of {frames} frames past the first found by code analysis")
    return found, frames, analysed
