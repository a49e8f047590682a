#!/usr/bin/env python3
"""--registers' x87 and SSE registers (fp_registers) against gdb's: every thread of the x86-64
test cores (their NT_PRFPREG notes), and every thread of a parked test program walked live
(PTRACE_GETREGSET) against gdb -p on the same process, and the core --save-core wrote of it read
by stackwalk and gdb against the live values; and three of the cores written as minidumps
(core_to_minidump.py puts NT_PRFPREG in each CONTEXT's FltSave) against the cores; and a program
parked with known values in ymm8 and xmm9 against them and gdb -p.

Usage: fp_registers_test.py STACKWALK UNPACKED_DUMPS_DIR

gdb gives fctrl, fstat, fop and mxcsr as numbers, xmm0-xmm15 as their two int64 halves, ymm0-ymm15
(where it reads the core's NT_X86_XSTATE: gcore's cores, live processes) as four, and
st0-st7 raw ("info registers stN": "(raw 0x...)"). Skipped (77) without gdb.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import core_to_minidump
import dumps

CORES = ["threads-O2-nofp", "threads-O0-fp", "sighandler", "args-O2", "crash-segv", "cxx-throw", "sig-segv-a"]
NAMES = ["fctrl", "fstat", "fop", "mxcsr"] + [f"st{i}" for i in range(8)] + [f"xmm{i}" for i in range(16)]
YMM = [f"ymm{i}" for i in range(16)]  # compared where gdb has them

GDB_FP = """
import json, re
for thread in gdb.selected_inferior().threads():
    thread.switch()
    frame, values = gdb.newest_frame(), {}
    for name in ("fctrl", "fstat", "fop", "mxcsr"):
        values[name] = int(frame.read_register(name))
    for i in range(16):
        halves = frame.read_register("xmm%d" % i)["v2_int64"]  # gdb has no int() of its uint128
        values["xmm%d" % i] = (int(halves[0]) & (2**64 - 1)) | (int(halves[1]) & (2**64 - 1)) << 64
    for i in range(16):  # from the core's NT_X86_XSTATE, when gdb takes it (not a kernel core of 6.18's: too small for gdb 13)
        try:
            quarters = frame.read_register("ymm%d" % i)["v4_int64"]
            values["ymm%d" % i] = sum((int(quarters[q]) & (2**64 - 1)) << (64 * q) for q in range(4))
        except Exception:
            break
    for i in range(8):
        text = gdb.execute("info registers st%d" % i, to_string=True)
        values["st%d" % i] = int(re.search(r"raw (0x[0-9a-f]+)", text).group(1), 16)
    print("FP", thread.ptid[1], json.dumps(values))
"""


def gdb_fp(target, tmp):
    script = os.path.join(tmp, "fp.py")
    with open(script, "w") as f:
        f.write(GDB_FP)
    out = subprocess.run(["gdb", "-q", "-nx", "-batch", "-ex", "set debuginfod enabled off", *target, "-x", script],
                         capture_output=True, text=True, timeout=120)
    return {int(line.split()[1]): json.loads(line.split(None, 2)[2])
            for line in out.stdout.splitlines() if line.startswith("FP")}


def ours_fp(stackwalk, *target):
    out = subprocess.run([stackwalk, *target, "--all-threads", "--json", "--registers"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"stackwalk {target}: exit {out.returncode}: {out.stderr}")
    return {t["tid"]: {k: int(v, 16) for k, v in (t["fp_registers"] or {}).items()}
            for t in json.loads(out.stdout)["threads"]}


def compare(name, ours, theirs, ymm=True):
    """ymm: the ymm registers too, where the oracle (theirs) has them."""
    failures = []
    if sorted(ours) != sorted(theirs):
        failures.append(f"{name}: threads {sorted(ours)} vs gdb's {sorted(theirs)}")
    for tid in sorted(set(ours) & set(theirs)):
        names = NAMES + [r for r in YMM if ymm and r in theirs[tid]]
        differ = {r: (hex(ours[tid].get(r, -1)), hex(theirs[tid][r])) for r in names if ours[tid].get(r) != theirs[tid][r]}
        if differ:
            failures.append(f"{name} thread {tid}: {differ}")
    return failures, sum(len(NAMES) + len([r for r in YMM if ymm and r in theirs[tid]]) for tid in set(ours) & set(theirs))


# Parks in pause() with known values in ymm8 and xmm9 (loaded after the last libc call that could
# run vzeroupper, then the system call made directly).
AVX_PROGRAM = r"""
#include <stdio.h>
#include <sys/syscall.h>
int main(void) {
  static const unsigned long long ymm8[4] = {0x1111111111111111, 0x2222222222222222, 0x3333333333333333, 0x4444444444444444};
  static const unsigned long long xmm9[2] = {0x5555555555555555, 0x6666666666666666};
  printf("READY\n");
  fflush(stdout);
  long number = SYS_pause;
  __asm__ volatile("vmovdqu %1, %%ymm8\n\tvmovdqu %2, %%xmm9\n\tsyscall"
                   : "+a"(number) : "m"(ymm8), "m"(xmm9) : "rcx", "r11", "memory", "xmm8", "xmm9");
  return 0;
}
"""
AVX_VALUES = {"ymm8": 0x4444444444444444333333333333333322222222222222221111111111111111,
              "xmm8": 0x22222222222222221111111111111111, "xmm9": 0x66666666666666665555555555555555,
              "ymm9": 0x66666666666666665555555555555555}  # a VEX move to xmm9 clears ymm9's upper half


def avx_program(stackwalk, tmp):
    """The AVX program walked live: its known values, and gdb -p's, equal stackwalk's."""
    if not shutil.which("gcc") or "avx" not in open("/proc/cpuinfo").read():
        print("     (no gcc or no AVX: the AVX program is not walked)")
        return [], 0
    exe = os.path.join(tmp, "avx")
    subprocess.run(["gcc", "-O1", "-o", exe, "-x", "c", "-"], input=AVX_PROGRAM, text=True, check=True)
    process = dumps.start_parked(exe)
    try:
        ours = ours_fp(stackwalk, "--pid", str(process.pid))
        failures, count = compare("the AVX program live", ours, gdb_fp(["-p", str(process.pid)], tmp))
        thread = ours.get(process.pid, {})
        known = {r: hex(thread.get(r, -1)) for r, v in AVX_VALUES.items() if thread.get(r) != v}
        if known:
            failures.append(f"the AVX program: registers other than it loaded: {known}")
        return failures, count
    finally:
        process.kill()
        process.wait()


def main():
    stackwalk, unpacked = sys.argv[1], sys.argv[2]
    if not shutil.which("gdb"):
        print("SKIP: gdb is not installed")
        return 77
    failures, compared, minidump_values = [], 0, 0
    with tempfile.TemporaryDirectory(prefix="stackwalk-fp-") as tmp:
        for name in CORES:
            core = os.path.join(unpacked, "cores", f"{name}.core")
            found, count = compare(name, ours_fp(stackwalk, core), gdb_fp(["-ex", f"core-file {core}"], tmp))
            failures += found
            compared += count
        # A minidump made of a core (core_to_minidump.py copies NT_PRFPREG into each CONTEXT's
        # FltSave): its CONTEXTs give the core's values.
        for name in CORES[:3]:
            core, minidump = os.path.join(unpacked, "cores", f"{name}.core"), os.path.join(tmp, f"{name}.dmp")
            core_to_minidump.write(core, minidump, [unpacked])
            found, count = compare(f"{name} as a minidump", ours_fp(stackwalk, minidump), ours_fp(stackwalk, core),
                                   ymm=False)  # a CONTEXT has no AVX state (CONTEXT_XSTATE is not written)
            failures += found
            minidump_values += count
        # The text form: under each thread's context frame, in gdb's names.
        core = os.path.join(unpacked, "cores", "threads-O2-nofp.core")
        text = subprocess.run([stackwalk, core, "--all-threads", "--registers"], capture_output=True, text=True).stdout
        threads = text.count("\nThread ")
        # Whole values: each register's hex digits, at its width, as JSON gives them.
        for pattern, count in ((r"fctrl=0x037f\b", 1), (r"mxcsr=0x00001f80\b", 1), (r"\bst\d=0x[0-9a-f]{20}\b", 8),
                               (r"\bxmm\d+=0x[0-9a-f]{32}\b", 16), (r"^ +ymm\d+=0x[0-9a-f]{64}$", 16)):
            found = len(re.findall(pattern, text, re.MULTILINE))
            if found != count * threads:
                failures.append(f"threads-O2-nofp text: {pattern!r} {found} times for {threads} threads")
        process = dumps.start_parked(os.path.join(unpacked, "bin", "threads-O2-nofp"))
        try:
            saved = os.path.join(tmp, "saved.core")
            ours = ours_fp(stackwalk, "--pid", str(process.pid), "--save-core", saved)
            found, count = compare("threads-O2-nofp live", ours, gdb_fp(["-p", str(process.pid)], tmp))
            failures += found
            compared += count
            # --save-core writes them as the kernel does (NT_PRFPREG and NT_X86_XSTATE after each
            # NT_PRSTATUS): stackwalk reads them all back; gdb 13 leaves the XSAVE note of this
            # kernel's size out, as it does a kernel core's.
            failures += compare("the core --save-core wrote, read by stackwalk,", ours_fp(stackwalk, saved), ours)[0]
            failures += compare("the live walk against gdb's reading of the core --save-core wrote", ours,
                                gdb_fp(["-ex", f"core-file {saved}"], tmp))[0]
        finally:
            process.kill()
            process.wait()
        found, count = avx_program(stackwalk, tmp)
        failures += found
        compared += count
    return dumps.failures_summary(
        failures, f"{compared} x87, SSE and AVX register values of {len(CORES)} cores and a live process equal to gdb's; "
                  f"{minidump_values} of 3 minidumps made of cores equal to the cores'")


if __name__ == "__main__":
    sys.exit(main())
