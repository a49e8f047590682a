#!/usr/bin/env python3
"""32-bit Windows code without frame pointers unwound by its PDB's frame data (issue 23).

Usage: windows_fpo_test.py STACKWALK

32-bit Windows programs cannot run on this machine (Wine's 32-bit part does not
install here), so the test runs real Windows code another way:
test/dumps/fpo/fpo.c is built by clang-19 for i686-w64-windows-gnu at -O2
without frame pointers and linked by lld into fpo.dll with a PDB, whose FrameData
stream (lld writes it from the compiler's FPO directives) alone describes each
function's frame. test/dumps/fpo/pe-loader.c, an i386 Linux program (not
position-independent: its mappings are where its program headers put them),
maps the DLL at its image base and calls it; its innermost function executes
ud2, and the kernel writes a core with that real stack (a kernel without IA32
emulation runs no i386 program: there the loader runs under qemu-i386, which
writes the core). Each function has written its own
return address into a table in the loader (the program's record of its stack).
The core becomes a Windows x86 minidump (CONTEXT_i386, the DLL and the loader as
modules, the DLL's CodeView record naming its PDB, the stack), walked with the
DLL and PDB, and with the PDB alone: the trap in level3, then the recorded
return addresses into level2, level1, fpo_top and the loader, each found by the
frame data (trust unwind_info); level1's call of level2 lies in an inlined
function, which both walks give at its line (the PDB's S_INLINESITE; the PDB
alone once gave none). Without the PDB nothing describes the frames:
level2 keeps a decoy (the address after a call) on its stack.

Skipped (77) without clang-19, lld, the i686 cross compiler, when neither the
kernel (no IA32 emulation) nor qemu-i386 runs i386 programs, or when no core is
written into the working directory.
"""
import json
import os
import resource
import shutil
import struct
import subprocess
import tempfile

import core_to_minidump
import dumps

SOURCES = os.path.join(dumps.SOURCE, "fpo")
TOOLS = ["clang-19", "ld.lld-19", "i686-linux-gnu-gcc"]
DLL_PATH = "C:\\test\\fpo.dll"
STATUS_ILLEGAL_INSTRUCTION = 0xC000001D

check = dumps.Checks()


def build(tmp):
    """fpo.dll and fpo.pdb in tmp/dll (lld's MinGW mode, --strip-all: the PDB
    alone names the functions, as an MSVC build), and the loader in tmp."""
    os.makedirs(os.path.join(tmp, "dll"))
    obj, loader = os.path.join(tmp, "fpo.o"), os.path.join(tmp, "pe-loader")
    dll, pdb = os.path.join(tmp, "dll", "fpo.dll"), os.path.join(tmp, "dll", "fpo.pdb")
    subprocess.run(["clang-19", "--target=i686-w64-windows-gnu", "-O2", "-fomit-frame-pointer", "-gcodeview", "-g",
                    "-c", os.path.join(SOURCES, "fpo.c"), "-o", obj], check=True)
    subprocess.run(["clang-19", "--target=i686-w64-windows-gnu", "-fuse-ld=lld", "-nostdlib", "-shared",
                    "-Wl,--no-insert-timestamp", "-Wl,--strip-all", f"-Wl,--pdb={pdb}", "-Wl,-Xlink=-pdbaltpath:C:\\test\\fpo.pdb",
                    "-Wl,--entry=_fpo_top", "-o", dll, obj], check=True)
    subprocess.run(["i686-linux-gnu-gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-no-pie",
                    os.path.join(SOURCES, "pe-loader.c"), "-o", loader], check=True)
    return dll, pdb, loader


def run_to_core(loader, dll, workdir, runner):
    """The loader's core (the trap in fpo.dll) and the address of its record table. Under
    qemu-user the core is qemu_NAME_DATE_PID.core; a directory named core stops the host
    kernel from dumping qemu itself."""
    def unlimited():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    if runner:
        os.makedirs(os.path.join(workdir, "core"))
    out = subprocess.run(runner + [loader, dll], cwd=workdir, capture_output=True, text=True, preexec_fn=unlimited,
                         timeout=60)
    is_core = (lambda f: f.endswith(".core")) if runner else (lambda f: f.startswith("core"))
    cores = [f for f in os.listdir(workdir) if is_core(f)]
    if out.returncode != -4 or len(cores) != 1 or not out.stdout.startswith("RECORD "):
        dumps.skip(f"the loader's trap left no core in its directory (exit {out.returncode}, {cores})")
    return os.path.join(workdir, cores[0]), int(out.stdout.split()[1], 16)


class PeImage:
    """What a minidump's module record says of a PE file: base, size, timestamp, CodeView."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        header = struct.unpack_from("<I", data, 0x3C)[0]
        self.timestamp = struct.unpack_from("<I", data, header + 8)[0]
        sections, optional_size = struct.unpack_from("<H", data, header + 6)[0], struct.unpack_from(
            "<H", data, header + 20)[0]
        optional = header + 24
        self.base, self.size = struct.unpack_from("<I", data, optional + 28)[0], struct.unpack_from(
            "<I", data, optional + 56)[0]
        debug_rva, debug_size = struct.unpack_from("<II", data, optional + 96 + 6 * 8)
        self.codeview = b""
        table = optional + optional_size
        for i in range(sections):
            va, raw_size, raw_at = struct.unpack_from("<III", data, table + 40 * i + 12)
            if va <= debug_rva < va + raw_size:
                entry = raw_at + debug_rva - va
                for at in range(entry, entry + debug_size, 28):
                    kind, size, _, pointer = struct.unpack_from("<IIII", data, at + 12)
                    if kind == 2:  # IMAGE_DEBUG_TYPE_CODEVIEW: the RSDS record
                        self.codeview = data[pointer:pointer + size]


def module_record(w, name, base, size, timestamp, codeview):
    name_rva = w.string(name)
    cv_rva = w.put(codeview, 4) if codeview else 0
    return struct.pack("<QIIII52sII8sQQ", base, size, 0, timestamp, name_rva, b"", len(codeview), cv_rva, b"", 0, 0)


def windows_minidump(core_path, dll, loader, out_path):
    """The core as a Windows x86 minidump: its thread, the DLL and the loader, the stack."""
    core = core_to_minidump.Core(core_path)
    tid, _, registers, _ = core.threads[0]
    w = core_to_minidump.Writer()
    csd = w.string("")
    system = w.put(struct.pack("<HHHBBIIIIIHH24s", 0, 6, 0, 1, 1, 10, 0, 19045, 2, csd, 0, 0, b""))
    raw = core_to_minidump.x86_context(registers)
    ctx = w.put(raw)
    start, stack = core.stack(registers["esp"])
    stack_rva = w.put(stack)
    threads = w.put(struct.pack("<I", 1) + struct.pack("<IIIIQQIIII", tid, 0, 0, 0, 0, start, len(stack), stack_rva,
                                                       len(raw), ctx))
    memory = w.put(struct.pack("<I", 1) + struct.pack("<QII", start, len(stack), stack_rva))
    image = PeImage(dll)
    with open(loader, "rb") as f:
        loads = [(vaddr, vaddr + size) for kind, _, vaddr, _, size in core_to_minidump.elf_segments(f.read())
                 if kind == 1]  # PT_LOAD, at its own address: the loader is not position-independent
    low, high = min(s for s, _ in loads), max(e for _, e in loads)
    modules = w.put(struct.pack("<I", 2) + module_record(w, DLL_PATH, image.base, image.size, image.timestamp,
                                                          image.codeview)
                    + module_record(w, loader, low, high - low, 0, b""), 4)
    record = struct.pack("<IIQQII15Q", STATUS_ILLEGAL_INSTRUCTION, 0, 0, registers["eip"], 0, 0, *([0] * 15))
    exception = w.put(struct.pack("<II", tid, 0) + record + struct.pack("<II", len(raw), ctx))
    streams = [(7, system, 56), (3, threads, 4 + 48), (5, memory, 4 + 16), (4, modules, 4 + 2 * 108),
               (6, exception, 168)]
    directory = w.put(b"".join(struct.pack("<III", kind, size, at) for kind, at, size in streams), 4)
    struct.pack_into("<IIIIIIQ", w.blob, 0, 0x504D444D, 0xA793, len(streams), directory, 0, 0, 0)
    with open(out_path, "wb") as f:
        f.write(w.blob)
    return registers["eip"]


def inline_call_site():
    """(function, file, line) of fpo.c's inlined call, by its comment."""
    with open(os.path.join(SOURCES, "fpo.c")) as f:
        line = next(n for n, text in enumerate(f, 1) if "/* the inlined call */" in text)
    return ("relay", "fpo.c", line)


def walk(stackwalk, minidump, module_path):
    out = subprocess.run([stackwalk, minidump, "--json", "--module-path", module_path], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {minidump}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["threads"][0]["frames"]


def main(stackwalk, options):
    missing = [tool for tool in TOOLS if not shutil.which(tool)]
    if missing:
        dumps.skip(f"not installed: {' '.join(missing)}")
    runner = [] if dumps.kernel_runs_i386() else ["qemu-i386"]
    if runner and not shutil.which(runner[0]):
        dumps.skip("this kernel does not run i386 programs (no IA32 emulation), and qemu-i386 is not installed")
    with tempfile.TemporaryDirectory(prefix="stackwalk-fpo-") as tmp:
        dll, pdb, loader = build(tmp)
        run = os.path.join(tmp, "run")
        os.makedirs(run)
        core_path, table = run_to_core(loader, dll, run, runner)
        recorded = list(struct.unpack("<4I", core_to_minidump.Core(core_path).read(table, 16)))
        minidump = os.path.join(tmp, "fpo.dmp")
        trap = windows_minidump(core_path, dll, loader, minidump)
        expected = [trap] + recorded
        names = ["level3", "level2", "level1", "fpo_top"]
        pdb_alone = os.path.join(tmp, "pdb-alone")
        os.makedirs(pdb_alone)
        shutil.copy(pdb, pdb_alone)
        inlined_call = inline_call_site()
        named = {}
        for what, module_path in (("the DLL and its PDB", os.path.dirname(dll)), ("the PDB alone", pdb_alone)):
            everything = walk(stackwalk, minidump, module_path)
            inlined = [(f["function"], os.path.basename(f["file"] or ""), f["line"]) for f in everything if f["inlined"]]
            check(inlined == [inlined_call], f"with {what}: relay inlined into level1 at {inlined_call}"
                  + ("" if inlined == [inlined_call] else f" (got {inlined})"))
            named[what] = [(f["function"], f["file"], f["line"], f["inlined"]) for f in everything[:6]]
            frames = [f for f in everything if not f["inlined"]][:5]
            ips = [int(f["ip"], 16) for f in frames]
            check(ips == expected, f"with {what}: the trap, then the 4 recorded return addresses"
                  + ("" if ips == expected else f" ({[hex(i) for i in ips]} vs {[hex(i) for i in expected]})"))
            got = [f["function"] for f in frames[:4]]
            check(got == names, f"with {what}: {names}" + ("" if got == names else f" (got {got})"))
            trusts = [f["trust"] for f in frames[1:]]
            check(trusts == ["unwind_info"] * 4, f"with {what}: each caller found by the PDB's frame data ({trusts})")
        check(named["the PDB alone"] == named["the DLL and its PDB"],
              "the PDB alone names the frames, files, lines and inlined call as the DLL with its PDB does")
        image_only = os.path.join(tmp, "image-only")
        os.makedirs(image_only)
        shutil.copy(dll, image_only)
        frames = walk(stackwalk, minidump, image_only)
        by_frame_data = [f["ip"] for f in frames if f["trust"] == "unwind_info"]
        check(not by_frame_data, f"without the PDB: no frame claims frame data ({by_frame_data}); "
              f"found by {[f['trust'] for f in frames[:5]]}")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
