#!/usr/bin/env python3
"""A synthetic Windows on ARM (32-bit) minidump: Windows' CONTEXT_ARM read and walked (issue 23).

Usage: windows_arm_test.py STACKWALK

Windows ARM dumps cannot be made on this machine, and neither Breakpad nor
rust-minidump reads Windows' CONTEXT_ARM (they read Breakpad's own ARM layout),
so the test writes one and checks it against the frames it laid out: a thread
stopped in a leaf function L of ntdll.dll (Thumb-2 code, its return address
still in lr, with the Thumb bit), called by B, called by C, called by main in
app.exe, each of which keeps the frame record {r11, lr} at r11 that Windows'
ARM ABI requires. Modules have no files and the dump holds only the stack: the
walk goes by lr and the r11 records (trust frame_pointer). The context frame's
registers must be the CONTEXT's, and --raw-context must give the CONTEXT back
byte for byte.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import synthetic_minidump

STACK = 0x0012F000
APP = ("app.exe", 0x00400000, 0x10000)
NTDLL = ("ntdll.dll", 0x77000000, 0x100000)
PC_IN_L = NTDLL[1] + 0x1A30
RETURN_INTO_B = APP[1] + 0x1106
RETURN_INTO_C = APP[1] + 0x1242
RETURN_INTO_MAIN = APP[1] + 0x130E
THUMB = 1
CPSR_THUMB = 0x20


def context(sp):
    out = bytearray(0x1A0)
    struct.pack_into("<I", out, 0, 0x200003)  # CONTEXT_ARM | CONTROL | INTEGER
    for i in range(13):
        struct.pack_into("<I", out, 4 + 4 * i, 0x1000 + i)
    struct.pack_into("<I", out, 4 + 4 * 11, sp)  # r11: B's frame record
    struct.pack_into("<IIII", out, 0x38, sp, RETURN_INTO_B | THUMB, PC_IN_L, CPSR_THUMB)  # sp, lr, pc, cpsr
    return bytes(out)


def stack(sp):
    """B's record at sp, C's 16 bytes up, main's 24 above that (ending the chain)."""
    words = [0] * 32
    words[0], words[1] = sp + 16, RETURN_INTO_C | THUMB
    words[4], words[5] = sp + 40, RETURN_INTO_MAIN | THUMB
    words[10], words[11] = 0, 0
    return struct.pack("<32I", *words)


def minidump():
    raw = context(STACK)
    # PROCESSOR_ARCHITECTURE_ARM (5), Windows 10.0.15063 (VER_PLATFORM_WIN32_NT).
    system = synthetic_minidump.system_info(5, 2, (10, 0, 15063), cpus=2)
    modules = [(name, base, size, 0x5F000000) for name, base, size in (APP, NTDLL)]
    return synthetic_minidump.one_thread(0x2A4, raw, STACK, stack(STACK), modules, system, timestamp=0x5F000000), raw


EXPECTED = [("ntdll.dll", PC_IN_L - NTDLL[1]), ("app.exe", RETURN_INTO_B - APP[1]),
            ("app.exe", RETURN_INTO_C - APP[1]), ("app.exe", RETURN_INTO_MAIN - APP[1])]


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory(prefix="stackwalk-winarm-") as tmp:
        dump = os.path.join(tmp, "arm.dmp")
        data, raw = minidump()
        with open(dump, "wb") as f:
            f.write(data)
        out = subprocess.run([stackwalk, dump, "--json", "--registers", "--raw-context"], capture_output=True,
                             text=True)
        if out.returncode != 0:
            raise SystemExit(f"stackwalk {dump}: exit {out.returncode}: {out.stderr}")
        report = json.loads(out.stdout)
        thread = report["threads"][0]
        frames = [(f["module"], int(f["module_offset"], 16)) for f in thread["frames"]]
        if frames != EXPECTED:
            failures.append(f"frames {frames}, not those laid out {EXPECTED}")
        trusts = [f["trust"] for f in thread["frames"]]
        if trusts != ["context"] + ["frame_pointer"] * (len(frames) - 1):
            failures.append(f"found by {trusts}, not the context, then lr and the r11 records")
        registers = thread["frames"][0]["registers"]
        wanted = {"r0": 0x1000, "fp": STACK, "sp": STACK, "lr": RETURN_INTO_B | THUMB, "pc": PC_IN_L}
        got = {name: int(registers.get(name, "-1"), 16) for name in wanted}
        if got != wanted:
            failures.append(f"context registers {got}, not {wanted}")
        if bytes.fromhex(thread["frames"][0].get("raw_context") or "") != raw:
            failures.append("--raw-context does not give the dump's CONTEXT_ARM back")
        if (report["dump"]["os"], report["dump"]["arch"]) != ("windows", "arm"):
            failures.append(f"read as {report['dump']['os']} {report['dump']['arch']}")
        print(f"{'ok  ' if not failures else 'FAIL'} CONTEXT_ARM: {len(frames)} frames by lr and r11, "
              f"its registers, --raw-context byte for byte")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
