#!/usr/bin/env python3
"""A synthetic macOS arm64e minidump walked as Breakpad's minidump_stackwalk walks it (issue 22).

Usage: macos_arm64_test.py STACKWALK

macOS dumps cannot be made on this machine, so the test writes one as Crashpad
lays them out: system info for macOS on ARM64, a module list of Mach-O images
(no files, no unwind data, no memory-info stream) and one thread whose stack
holds the frame-record chain Apple's ABI keeps. The thread is stopped in a leaf
function L of libsystem_kernel (its return address still in lr), called by B in
libsystem_pthread, called by C in the app, called by main. As on arm64e, every
return address is signed: its pointer-authentication code lies at bits 47-54,
above macOS's 47-bit address space, so a walk that keeps 48 bits of it finds no
module there. stackwalk must give the frames Breakpad's minidump_stackwalk gives
(module offsets; the npm package `minidump` as breakpad_symbols_test.py fetches
it), found by the frame pointer, or without Breakpad the frames laid out.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import breakpad_symbols_test
import synthetic_minidump
import windows_arm64_test

STACK = 0x16FDFF000
# (path, base, size) of each image, as Crashpad's module list names them.
KERNEL = ("/usr/lib/system/libsystem_kernel.dylib", 0x18F000000, 0x40000)
PTHREAD = ("/usr/lib/system/libsystem_pthread.dylib", 0x18F100000, 0x10000)
APP = ("/Applications/Demo.app/Contents/MacOS/Demo", 0x100000000, 0x8000)
PC_IN_L = KERNEL[1] + 0x1A38
RETURN_INTO_B = PTHREAD[1] + 0x6E20
RETURN_INTO_C = APP[1] + 0x3F44
RETURN_INTO_MAIN = APP[1] + 0x3FA0


def signed(address, code):
    """A return address as arm64e stores it: its signature in the bits above macOS's 47."""
    return address | code << 47


def stack(sp):
    """B's frame record at sp (L, a leaf, keeps none), C's 32 bytes up, main's 48 above that."""
    words = [0] * 64
    words[0], words[1] = sp + 32, signed(RETURN_INTO_C, 0x5B)
    words[4], words[5] = sp + 80, signed(RETURN_INTO_MAIN, 0x2F)
    words[10], words[11] = 0, 0  # main: the chain ends
    return struct.pack("<64Q", *words)


def minidump():
    sp = STACK
    context = bytearray(0x390)
    struct.pack_into("<I", context, 0, 0x400003)  # CONTEXT_ARM64 | CONTROL | INTEGER
    struct.pack_into("<QQQQ", context, 0xF0, sp, signed(RETURN_INTO_B, 0x11), sp, PC_IN_L)  # fp, lr, sp, pc
    # MD_CPU_ARCHITECTURE_ARM64, MD_OS_MAC_OS_X (0x8101), macOS 14.5.
    system = synthetic_minidump.system_info(12, 0x8101, (14, 5, 23), cpus=8)
    modules = [(path, base, size, 0) for path, base, size in (APP, KERNEL, PTHREAD)]
    return synthetic_minidump.one_thread(0x103, context, sp, stack(sp), modules, system, timestamp=0x66000000)


# (module, offset) of each frame laid out.
EXPECTED = [(os.path.basename(KERNEL[0]), PC_IN_L - KERNEL[1]), (os.path.basename(PTHREAD[0]), RETURN_INTO_B - PTHREAD[1]),
            (os.path.basename(APP[0]), RETURN_INTO_C - APP[1]), (os.path.basename(APP[0]), RETURN_INTO_MAIN - APP[1])]


def main():
    stackwalk = os.path.abspath(sys.argv[1])
    tools = breakpad_symbols_test.breakpad_tools(os.path.join(os.path.dirname(stackwalk), "breakpad"))
    failures = []
    with tempfile.TemporaryDirectory(prefix="stackwalk-macarm64-") as tmp:
        dump = os.path.join(tmp, "macos-arm64.dmp")
        with open(dump, "wb") as f:
            f.write(minidump())
        out = subprocess.run([stackwalk, dump, "--json"], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"stackwalk {dump}: exit {out.returncode}: {out.stderr}")
        report = json.loads(out.stdout)
        thread = report["threads"][0]
        frames = [(f["module"], int(f["module_offset"] or "0", 16)) for f in thread["frames"]]
        offsets = [offset for _, offset in frames]
        expected = windows_arm64_test.breakpad(tools[1], dump) if tools else [o for _, o in EXPECTED]
        oracle = "minidump_stackwalk" if tools else "the frames laid out"
        if offsets != expected:
            failures.append(f"{[hex(o) for o in offsets]} vs {oracle}'s {[hex(o) for o in expected]}")
        if frames != EXPECTED:
            failures.append(f"{frames}, not the frames laid out {EXPECTED}")
        if expected != [o for _, o in EXPECTED]:
            failures.append(f"{oracle} gives {[hex(o) for o in expected]}, not the frames laid out")
        trusts = [f["trust"] for f in thread["frames"][1:]]
        if trusts != ["frame_pointer"] * (len(thread["frames"]) - 1):
            failures.append(f"callers found by {trusts}, not the frame pointer")
        if (report["dump"]["os"], report["dump"]["arch"]) != ("macos", "arm64"):
            failures.append(f"read as {report['dump']['os']} {report['dump']['arch']}")
        print(f"{'ok  ' if not failures else 'FAIL'} signed return addresses: {len(frames)} frames, as {oracle}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
