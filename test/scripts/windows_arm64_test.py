#!/usr/bin/env python3
"""A synthetic Windows ARM64 minidump walked as Breakpad's minidump_stackwalk walks it (issue 22).

Usage: windows_arm64_test.py STACKWALK

Windows ARM64 dumps cannot be made on this machine, so the test writes one: a
CONTEXT_ARM64 thread stopped in a leaf function L (no .pdata entry: its return
address is still in lr), called by B, called by C, called by main, in a PE image
(machine ARM64) whose .pdata describes B and main by packed unwind data and C
by an .xdata record (save_fplr_x, save_regp, set_fp); each function keeps the
frame-record chain the ABI requires. Two dumps: one holds the
image's headers, .pdata and .xdata in its memory (stackwalk unwinds by them:
trust unwind_info, and C's saved x19 and x20 come back), one holds only the
stack (stackwalk follows the frame records: trust frame_pointer). Both must
give the frames Breakpad's minidump_stackwalk gives (module offsets), from the
npm package `minidump` as breakpad_symbols_test.py fetches it; without it, the
frames the test laid out. --unwind-info describes C's .xdata codes and B's
packed data.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import breakpad_symbols_test
import synthetic_minidump

BASE = 0x140000000
IMAGE_SIZE = 0x3000
STACK = 0x7ff000
# Functions (RVAs) and the return addresses into them.
L, B, C, MAIN = 0x1040, 0x1100, 0x1200, 0x1300
PC_IN_L = BASE + L + 0x8
RETURN_INTO_B = BASE + B + 0x14
RETURN_INTO_C = BASE + C + 0x24
RETURN_INTO_MAIN = BASE + MAIN + 0x18
SAVED_X19, SAVED_X20 = 0x1919191919, 0x2020202020


def packed(length, reg_i, cr, frame_size):
    """A packed RUNTIME_FUNCTION's unwind data (Flag 1): FunctionLength, RegI, CR, FrameSize."""
    return 1 | (length << 2) | (reg_i << 16) | (cr << 21) | (frame_size << 23)


def image():
    """The PE image's first 0x2200 bytes: headers, code (nops), .pdata, .xdata."""
    out = bytearray(0x2200)
    out[0:2] = b"MZ"
    struct.pack_into("<I", out, 0x3c, 0x80)
    out[0x80:0x84] = b"PE\0\0"
    struct.pack_into("<HHIIIHH", out, 0x84, 0xAA64, 2, 0, 0, 0, 0xF0, 0x22)  # file header: 2 sections
    opt = 0x98
    struct.pack_into("<H", out, opt, 0x20B)                 # PE32+
    struct.pack_into("<Q", out, opt + 24, BASE)             # ImageBase
    struct.pack_into("<I", out, opt + 56, IMAGE_SIZE)       # SizeOfImage
    struct.pack_into("<I", out, opt + 60, 0x400)            # SizeOfHeaders
    struct.pack_into("<I", out, opt + 108, 16)              # NumberOfRvaAndSizes
    struct.pack_into("<II", out, opt + 112 + 3 * 8, 0x2000, 3 * 8)  # the exception directory
    sections = opt + 0xF0
    struct.pack_into("<8sIIIIIIHHI", out, sections, b".text", 0x1000, 0x1000, 0x1000, 0x1000, 0, 0, 0, 0, 0x60000020)
    struct.pack_into("<8sIIIIIIHHI", out, sections + 40, b".pdata", 0x1000, 0x2000, 0x1000, 0x2000, 0, 0, 0, 0,
                     0x40000040)
    for rva in range(0x1000, 0x2000, 4):
        struct.pack_into("<I", out, rva, 0xD503201F)        # nop
    for rva in (RETURN_INTO_B - BASE - 4, RETURN_INTO_C - BASE - 4, RETURN_INTO_MAIN - BASE - 4):
        struct.pack_into("<I", out, rva, 0x94000000)        # bl
    # .pdata: B (packed, CR=3, 32-byte frame), C (.xdata at 0x2100), main (packed).
    struct.pack_into("<II", out, 0x2000, B, packed(16, 0, 3, 2))
    struct.pack_into("<II", out, 0x2008, C, 0x2100)
    struct.pack_into("<II", out, 0x2010, MAIN, packed(16, 0, 3, 2))
    # C's .xdata: 32 instructions, no epilog scopes, one code word:
    # set_fp; save_regp x19, 16; save_fplr_x 48; end
    struct.pack_into("<I", out, 0x2100, 32 | (2 << 27))
    out[0x2104:0x2108] = bytes([0xE1, 0xC8, 0x02, 0x85])
    out[0x2108:0x210C] = bytes([0xE4, 0, 0, 0])
    return bytes(out)


def stack(sp):
    """B's frame record at sp (L, a leaf, keeps none), C's 32 bytes up (with x19,
    x20), main's 48 above that."""
    words = [0] * 64
    words[0], words[1] = sp + 32, RETURN_INTO_C          # B: stp x29, lr, [sp, #-32]!
    words[4], words[5] = sp + 80, RETURN_INTO_MAIN        # C: stp x29, lr, [sp, #-48]!
    words[6], words[7] = SAVED_X19, SAVED_X20             #    stp x19, x20, [sp, #16]
    words[10], words[11] = 0, 0                           # main: the chain ends
    return struct.pack("<64Q", *words)


def minidump(with_image):
    sp = STACK
    context = bytearray(0x390)
    struct.pack_into("<I", context, 0, 0x400003)  # CONTEXT_ARM64 | CONTROL | INTEGER
    struct.pack_into("<Q", context, 8 + 19 * 8, 0x1313)  # x19, x20 in the body of B
    struct.pack_into("<Q", context, 8 + 20 * 8, 0x1414)
    struct.pack_into("<QQQQ", context, 0xF0, sp, RETURN_INTO_B, sp, PC_IN_L)  # fp (B's record), lr, sp, pc
    # PROCESSOR_ARCHITECTURE_ARM64, Windows 10.0.22621 (VER_PLATFORM_WIN32_NT).
    system = synthetic_minidump.system_info(12, 2, (10, 0, 22621), cpus=8)
    return synthetic_minidump.one_thread(0x1234, context, sp, stack(sp), [("app.exe", BASE, IMAGE_SIZE, 0x5F000000)],
                                         system, [(BASE, image())] if with_image else [], timestamp=0x5F000000)


EXPECTED = [PC_IN_L - BASE, RETURN_INTO_B - BASE, RETURN_INTO_C - BASE, RETURN_INTO_MAIN - BASE]


def ours(stackwalk, dump):
    out = subprocess.run([stackwalk, dump, "--json", "--registers"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {dump}: exit {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)["threads"][0]


def breakpad(minidump_stackwalk, dump):
    """Thread 0's module offsets; Breakpad gives a caller the address of its call
    (the return address - 4 on arm64), stackwalk the return address."""
    out = subprocess.run([minidump_stackwalk, "-m", dump], capture_output=True, text=True, timeout=60).stdout
    frames = [line.split("|") for line in out.splitlines() if line[:1].isdigit() and line.count("|") == 6]
    return [int(f[6], 16) + (4 if f[1] != "0" else 0) for f in frames if f[0] == "0"]


def unwind_info_failures(stackwalk, dump):
    """--unwind-info at the return address into C: its .xdata's codes, and that the
    address is in the body; at B's second instruction: its packed data, in the prolog."""
    failures = []
    for address, wanted in ((RETURN_INTO_C, ["c8 02  save_regp x19, x20 at [sp+16]",
                                             "85  save_fplr_x x29, lr at [sp-48]!", "in the body"]),
                            (BASE + B + 4, ["packed (Flag 1)", "CR 3, FrameSize 32 bytes", "in the prolog"])):
        out = subprocess.run([stackwalk, dump, "--unwind-info", hex(address)], capture_output=True, text=True).stdout
        missing = [w for w in wanted if w not in out]
        if missing:
            failures.append(f"--unwind-info {hex(address)}: {missing} not in:\n{out}")
    return failures


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    failures = []
    with tempfile.TemporaryDirectory(prefix="stackwalk-winarm64-") as tmp:
        for with_image, trust in ((True, "unwind_info"), (False, "frame_pointer")):
            what = "with the image's unwind data" if with_image else "stack only"
            dump = os.path.join(tmp, f"arm64-{int(with_image)}.dmp")
            with open(dump, "wb") as f:
                f.write(minidump(with_image))
            thread = ours(stackwalk, dump)
            offsets = [int(f["module_offset"], 16) for f in thread["frames"]]
            expected = breakpad(tools[1], dump) if tools else EXPECTED
            oracle = "minidump_stackwalk" if tools else "the frames laid out"
            if offsets != expected:
                failures.append(f"{what}: {[hex(o) for o in offsets]} vs {oracle}'s {[hex(o) for o in expected]}")
            if expected != EXPECTED:
                failures.append(f"{what}: {oracle} gives {[hex(o) for o in expected]}, not the frames laid out")
            trusts = [f["trust"] for f in thread["frames"][1:]]
            if trusts != [trust] * (len(thread["frames"]) - 1):
                failures.append(f"{what}: callers found by {trusts}, not {trust}")
            if with_image and len(thread["frames"]) > 3:
                regs = thread["frames"][3].get("registers", {})
                if int(regs.get("x19", "0"), 16) != SAVED_X19 or int(regs.get("x20", "0"), 16) != SAVED_X20:
                    failures.append(f"{what}: main's x19, x20 are {regs.get('x19')}, {regs.get('x20')}")
            if with_image:
                failures += unwind_info_failures(stackwalk, dump)
            print(f"{'ok  ' if not failures else 'FAIL'} {what}: {len(offsets)} frames, as {oracle}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
