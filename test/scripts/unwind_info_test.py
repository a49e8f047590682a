#!/usr/bin/env python3
"""--unwind-info against LLVM's own dumpers, at every frame of the test dumps.

- Windows x64: for each frame of each Windows test dump whose module file is at hand, the
  RUNTIME_FUNCTION, UNWIND_INFO fields and unwind codes stackwalk prints equal
  `llvm-readobj --unwind`'s entry for the function covering the address (read from the
  file; stackwalk reads the dump's memory with the file overlaid).
- DWARF: for each frame of the ELF test cores, the FDE stackwalk finds (through
  .eh_frame_hdr or its own index) is the one `llvm-dwarfdump --eh-frame`/`--debug-frame`
  lists at that offset, with the same range and instructions, and the row said to be in
  force is the last row of that FDE at or before the address.
Also: module+offset and module!function name the same place as the address; a module or
symbol the dump does not have is exit 2; --json is refused.

Usage: unwind_info_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import re
import shutil
import subprocess

import dumps

check = dumps.Checks()
run = dumps.run_in
READOBJ = shutil.which("llvm-readobj-19") or shutil.which("llvm-readobj")
DWARFDUMP = shutil.which("llvm-dwarfdump-19") or shutil.which("llvm-dwarfdump")


class Tally:
    """Frames compared, and those that differ (each printed with what differs)."""

    def __init__(self):
        self.compared = self.differ = 0

    def add(self, ok, detail):
        self.compared += 1
        self.differ += not ok
        if not ok:
            print("  differs: " + detail)


def lookup_address(frame):
    """The address a frame's unwind data is looked up at: a caller's return address may be
    the first byte after its function, so the call before it."""
    ip = int(frame["ip"], 16)
    return ip if frame["trust"] == "context" else ip - 1


def readobj_functions(path):
    """llvm-readobj --unwind's RuntimeFunctions: (start, end, info address, prolog, frame, codes)."""
    text = subprocess.run([READOBJ, "--unwind", path], capture_output=True, text=True).stdout
    functions = []
    for block in text.split("RuntimeFunction {")[1:]:
        value = lambda key: re.search(key + r": .*?\(?0x([0-9A-F]+)\)?", block)
        start, end, info = (int(value(k).group(1), 16) for k in ("StartAddress", "EndAddress", "UnwindInfoAddress"))
        prolog = int(re.search(r"PrologSize: (\d+)", block).group(1))
        frame = re.search(r"FrameRegister: (\S+)", block).group(1).lower()
        codes = [(int(o, 16), op) + tuple(canonical_operand(x) for x in re.findall(r"=([^,\s]+)", rest))
                 for o, op, rest in re.findall(r"^\s+0x([0-9A-F]+): (\w+)(.*)$", block, re.M)]
        functions.append((start, end, info, prolog, frame, codes))
    return functions


def canonical_operand(text):
    text = text.lower()
    if text.startswith("0x"):
        return int(text, 16)
    return int(text) if text.isdigit() else text


def stackwalk_win64(lines):
    """(start, end, info address, prolog, frame, codes) from stackwalk's first UNWIND_INFO."""
    start, end = (int(x, 16) for x in re.search(r"begin (0x[0-9a-f]+) .*end (0x[0-9a-f]+)", lines[0]).groups())
    info_line = next(l for l in lines if l.startswith("UNWIND_INFO at "))
    info = int(re.search(r"at (0x[0-9a-f]+)", info_line).group(1), 16)
    prolog = int(re.search(r"prolog size (0x[0-9a-f]+)", info_line).group(1), 16)
    frame = re.search(r"frame register (\w+)", info_line).group(1)
    frame = "-" if frame == "none" else frame
    codes = []
    for line in lines[lines.index(info_line) + 1:]:
        m = re.match(r"\s+\[\d+\] offset (0x[0-9a-f]+): (\w+)(.*)$", line)
        if not m:
            break
        op = m.group(2).replace("UWOP_", "")  # llvm-readobj: PUSH_NONVOL, SAVE_XMM128, ...
        operands = re.findall(r"(?:^| )(r\w+|xmm\d+|0x[0-9a-f]+)(?= |$)", m.group(3).replace(" = rsp + ", " "))
        codes.append((int(m.group(1), 16), op) + tuple(canonical_operand(x) for x in operands))
    return start, end, info, prolog, frame, codes


def unwind_info(stackwalk, args, cwd, where):
    r = run(stackwalk, args + ["--unwind-info", where], cwd)
    return r.returncode, r.stdout.splitlines()[2:], r.stderr


def check_windows(stackwalk, unpacked):
    cwd = os.path.join(unpacked, "windows")
    args = ["--module-path", "bin", "--module-path", "system32"]
    tally = Tally()
    for dump in sorted(os.listdir(os.path.join(cwd, "dumps"))):
        report = json.loads(run(stackwalk, [f"dumps/{dump}", "-a", "--json"] + args, cwd).stdout)
        files = {m["name"]: m["file"] for m in report["modules"] if m["file"]}
        for frame in (f for t in report["threads"] for f in t["frames"] if f["module"] in files and not f["inlined"]
                      and not f["tail_call"]):
            address = lookup_address(frame)
            covering = [f for f in readobj_functions_cached(os.path.join(cwd, files[frame["module"]]))
                        if f[0] <= address < f[1]]
            code, lines, _ = unwind_info(stackwalk, [f"dumps/{dump}"] + args, cwd, hex(address))
            if not covering:
                ok = code == 0 and lines and lines[0].startswith("  no RUNTIME_FUNCTION covers")
            else:
                ok = code == 0 and stackwalk_win64([l.strip() if not l.startswith("    [") else l[2:]
                                                    for l in lines]) == covering[0]
            tally.add(ok, f"{dump} {frame['module']} {hex(address)}\n    ours: {lines[:6]}\n    llvm: {covering[:1]}")
    check(tally.compared > 50 and tally.differ == 0,
          f"Windows x64: {tally.compared} frames' RUNTIME_FUNCTION, UNWIND_INFO and codes equal llvm-readobj "
          f"--unwind's ({tally.differ} differ)")


_readobj_cache = {}


def readobj_functions_cached(path):
    if path not in _readobj_cache:
        _readobj_cache[path] = readobj_functions(path)
    return _readobj_cache[path]


def dwarfdump_fdes(path, section):
    """llvm-dwarfdump's FDEs of a section: offset -> (header from cie=, instruction lines, rows)."""
    text = subprocess.run([DWARFDUMP, f"--{section}", path], capture_output=True, text=True).stdout
    fdes = {}
    for block in re.split(r"\n(?=[0-9a-f]{8} [0-9a-f]{8,16} [0-9a-f]{8,16} )", text):
        m = re.match(r"([0-9a-f]{8}) \S+ \S+ FDE (cie=.*)", block)
        if m:
            lines = block.splitlines()[1:]
            instructions = [l.strip().lower() for l in lines if l.strip().startswith("DW_CFA")]
            rows = [l.strip().lower() for l in lines if re.match(r"\s+0x[0-9a-f]+: CFA=", l)]
            fdes[int(m.group(1), 16)] = (m.group(2), instructions, rows)
    return fdes


def check_dwarf(stackwalk, unpacked):
    args = ["--sysroot", "sysroot", "--module-path", "bin"]
    tally = Tally()
    cache = {}
    for core in ("crash-abort", "crash-segv", "sig-abort", "threads-O2-nofp"):
        dump = f"cores/{core}.core"
        report = json.loads(run(stackwalk, [dump, "-a", "--json"] + args, unpacked).stdout)
        for frame in (f for t in report["threads"] for f in t["frames"]
                      if not f["inlined"] and f["trust"] in ("context", "cfi")):
            address = lookup_address(frame)
            code, lines, _ = unwind_info(stackwalk, [dump] + args, unpacked, hex(address))
            if code != 0 or not lines:
                continue  # no CFI covers it (checked by the walk's own tests)
            m = re.match(r"  \.(eh_frame|debug_frame) of (.*) \(file address (0x[0-9a-f]+)\)", lines[0])
            fde = next((l for l in lines if " FDE cie=" in l), "")
            offset = int(fde.split()[0], 16) if fde else -1
            section = "eh-frame" if m.group(1) == "eh_frame" else "debug-frame"
            key = (m.group(2), section)
            if key not in cache:
                cache[key] = dwarfdump_fdes(os.path.join(unpacked, m.group(2)), section)
            want = cache[key].get(offset)
            body = lines[lines.index(fde) + 1:]
            instructions = [l.strip().lower() for l in body if l.strip().startswith("DW_CFA")]
            rows = [l.strip().lower() for l in body if re.match(r"\s+0x[0-9a-f]+: CFA=", l)]
            file_address = int(m.group(3), 16)
            in_force = [r for r in rows if int(r.split(":")[0], 16) <= file_address][-1:]
            ok = (want is not None and fde[fde.index("cie="):] == want[0] and instructions == want[1]
                  and rows == want[2] and lines[-1].lower().endswith(in_force[0] if in_force else "?"))
            tally.add(ok, f"{dump} {hex(address)} {fde}\n    llvm: {want and want[0]}")
    check(tally.compared > 30 and tally.differ == 0,
          f"DWARF: {tally.compared} frames' FDE (range, CIE, instructions, rows) equal llvm-dwarfdump's; the row in "
          f"force is the last at or before the address ({tally.differ} differ)")


def check_spellings(stackwalk, unpacked):
    args = ["cores/crash-abort.core", "--sysroot", "sysroot", "--module-path", "bin"]
    frames = json.loads(run(stackwalk, args + ["--json"], unpacked).stdout)["threads"][0]["frames"]
    frame = next(f for f in frames if f["function"] == "check_entry")
    by_address = unwind_info(stackwalk, args, unpacked, frame["ip"])[1]
    by_offset = unwind_info(stackwalk, args, unpacked, f"crash-abort+{frame['module_offset']}")[1]
    by_name = unwind_info(stackwalk, args, unpacked, f"crash-abort!check_entry+{frame['function_offset']}")[1]
    check(by_address and by_address == by_offset == by_name,
          "ADDRESS, module+0xOFFSET and module!function+0xOFFSET describe the same place")
    for where, what in (("nosuch.so!f", "no module named nosuch.so"), ("crash-abort!no_such_function", "no symbol"),
                        ("0x10", "no module of the dump covers 0x10")):
        r = run(stackwalk, args + ["--unwind-info", where], unpacked)
        check(r.returncode == 2 and what in r.stderr, f"--unwind-info {where}: exit 2, {what}")
    r = run(stackwalk, args + ["--unwind-info", frame["ip"], "--json"], unpacked)
    check(r.returncode == 2 and "--unwind-info" in r.stderr, "--unwind-info with --json: exit 2 (it prints text)")


def main(stackwalk, unpacked, options):
    if not READOBJ or not DWARFDUMP:
        dumps.skip("llvm-readobj and llvm-dwarfdump (Debian's llvm-19) are not installed")
    check_windows(stackwalk, unpacked)
    check_dwarf(stackwalk, unpacked)
    check_spellings(stackwalk, unpacked)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
