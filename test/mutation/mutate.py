#!/usr/bin/env python3
"""Mutation test for stackwalk: corrupt ELF cores and minidumps, check it fails cleanly.

    mutate.py STACKWALK [--sysroot DIR] [--module-path DIR]... [--seed N] [--quick]
              [--keep DIR] [--only ID]... [-j N] [--backtrace] DUMP...

For every dump, with a fixed seed, it makes mutants: for an ELF core,
truncations, bit flips and chosen values in the ELF header, program headers,
notes and stack memory; for a minidump (signature "MDMP"), truncations, the
header and stream directory, list counts, strings, contexts and registers,
stack memory, memory ranges, CodeView records, modules, and streams appended
then corrupted. It runs
`STACKWALK MUTANT -a --json [--sysroot ..] [--module-path ..]` on each under a
10 s timeout, RLIMIT_AS = 1 GiB and no core dumps, and checks:

  1. no death by a signal (crash, abort) and no sanitizer report;
  2. the exit code is 0 or 3;
  3. no timeout;
  4. exit 0: stdout is JSON with a "threads" array;
     exit 3: stderr is exactly one line starting with "stackwalk: ".

One line per failing mutant, then `mutants N, failures F`; exit status 1 if any
failure (2 on a usage error). Mutant ids are `DUMPNAME:INDEX`; the same seed,
mode (--quick or not) and dump always give the same mutants, so
`--only ID --keep DIR` rebuilds one for a debugger. See README.md.

Python 3 standard library only. Assumes 64-bit little-endian x86-64 cores;
minidumps may hold AMD64, x86 or ARM64 contexts.
"""

import argparse
import json
import os
import random
import resource
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

TIMEOUT_S = 10.0
AS_LIMIT = 1 << 30

PT_LOAD, PT_NOTE = 1, 4
PF_X = 1
NT_PRSTATUS, NT_AUXV, NT_FILE = 1, 6, 0x46494C45
PR_REG_OFF = 112                       # offset of pr_reg in the NT_PRSTATUS desc
REG_NAMES = ("r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi "
             "orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs").split()
REG_OFF = {n: PR_REG_OFF + 8 * i for i, n in enumerate(REG_NAMES)}
EHDR_FIELDS = {  # name: (offset, size)
    "e_phoff": (0x20, 8), "e_shoff": (0x28, 8), "e_phentsize": (0x36, 2),
    "e_phnum": (0x38, 2), "e_shentsize": (0x3A, 2), "e_shnum": (0x3C, 2),
    "e_shstrndx": (0x3E, 2),
}
PHDR_FIELDS = {"p_offset": (8, 8), "p_vaddr": (16, 8), "p_filesz": (32, 8),
               "p_memsz": (40, 8)}
SIGNAMES = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
            9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 24: "SIGXCPU",
            25: "SIGXFSZ", 31: "SIGSYS"}


class CoreError(Exception):
    pass


# --------------------------------------------------------------------------
# Parsing: just enough of the core to know where to aim.

class DumpFile:
    """A dump's path, file name and bytes; Core and Minidump parse them."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as f:
            self.data = f.read()


class Core(DumpFile):
    kind = "elf-core"
    ext = ".core"

    def __init__(self, path):
        super().__init__(path)
        d = self.data
        if len(d) < 64 or d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise CoreError("not a 64-bit little-endian ELF file")
        self.phoff, = struct.unpack_from("<Q", d, 0x20)
        self.phentsize, self.phnum = struct.unpack_from("<HH", d, 0x36)
        if self.phentsize < 56 or self.phoff + self.phnum * self.phentsize > len(d):
            raise CoreError("program headers out of the file")
        self.phdrs = []          # dicts with the header's own file offset "at"
        for i in range(self.phnum):
            at = self.phoff + i * self.phentsize
            typ, flags, off, vaddr, _pa, filesz, memsz, _al = struct.unpack_from(
                "<IIQQQQQQ", d, at)
            self.phdrs.append(dict(index=i, at=at, type=typ, flags=flags,
                                   offset=off, vaddr=vaddr, filesz=filesz,
                                   memsz=memsz))
        self.loads = [p for p in self.phdrs if p["type"] == PT_LOAD]
        self.note_segs = [p for p in self.phdrs if p["type"] == PT_NOTE]
        self.dumped = [p for p in self.loads if p["filesz"] > 0
                       and p["offset"] + p["filesz"] <= len(d)]
        self.exec_ranges = [(p["vaddr"], p["vaddr"] + p["memsz"])
                            for p in self.loads if p["flags"] & PF_X]
        self.notes = []          # dicts: at (header offset), name, type, desc_at, descsz
        for seg in self.note_segs:
            pos, end = seg["offset"], min(seg["offset"] + seg["filesz"], len(d))
            while pos + 12 <= end:
                namesz, descsz, typ = struct.unpack_from("<III", d, pos)
                name_at = pos + 12
                desc_at = name_at + ((namesz + 3) & ~3)
                nxt = desc_at + ((descsz + 3) & ~3)
                if nxt > end:
                    break
                name = d[name_at:name_at + namesz].rstrip(b"\0")
                self.notes.append(dict(at=pos, name=name, type=typ,
                                       desc_at=desc_at, descsz=descsz))
                pos = nxt
        core = [n for n in self.notes if n["name"] == b"CORE"]
        self.prstatus = [n for n in core if n["type"] == NT_PRSTATUS
                         and n["descsz"] >= REG_OFF["gs"] + 8]
        self.nt_file = next((n for n in core if n["type"] == NT_FILE
                             and n["descsz"] >= 16), None)
        self.auxv = next((n for n in core if n["type"] == NT_AUXV
                          and n["descsz"] >= 16), None)
        self.threads = []
        for n in self.prstatus:
            regs = {r: struct.unpack_from("<Q", d, n["desc_at"] + REG_OFF[r])[0]
                    for r in ("rip", "rsp", "rbp")}
            self.threads.append(dict(note=n, **regs))

    def u64(self, off):
        return struct.unpack_from("<Q", self.data, off)[0]

    def load_for(self, addr):
        """The dumped PT_LOAD that holds addr, or None."""
        for p in self.dumped:
            if p["vaddr"] <= addr < p["vaddr"] + p["filesz"]:
                return p
        return None

    def file_off(self, addr):
        p = self.load_for(addr)
        return None if p is None else p["offset"] + addr - p["vaddr"]

    def in_exec(self, v):
        return any(lo <= v < hi for lo, hi in self.exec_ranges)


# --------------------------------------------------------------------------
# Mutations. A mutation is (description, edits, truncate_at): edits are
# (file offset, bytes) pairs applied in order, truncate_at cuts the file.

def pick_value(rng, size, orig, extra=()):
    """A value for a field of `size` bytes: (label, int)."""
    top = (1 << (8 * size)) - 1
    kind = rng.choice(["bitflip", "bitflip", "random", "zero", "max", "top-bit",
                       "off-by-one", "special"])
    if kind == "bitflip":
        b = rng.randrange(8 * size)
        return "flip bit %d" % b, orig ^ (1 << b)
    if kind == "random":
        v = rng.getrandbits(8 * size)
        return "random 0x%x" % v, v
    if kind == "zero":
        return "0", 0
    if kind == "max":
        return "0x%x" % top, top
    if kind == "top-bit":
        return "0x%x" % (1 << (8 * size - 1)), 1 << (8 * size - 1)
    if kind == "off-by-one":
        d = rng.choice([-1, 1, -8, 8, 4096])
        return "%+d" % d, (orig + d) & top
    cands = [v & top for v in extra] + [top - 7, 0x7FFFFFFF & top, 0x80000000 & top]
    v = rng.choice(cands)
    return "0x%x" % v, v


def pack(size, v):
    return v.to_bytes(size, "little")


def field_edit(rng, core, what, at, size, extra=()):
    orig = int.from_bytes(core.data[at:at + size], "little")
    for _ in range(10):                   # a mutation that changes nothing is wasted
        label, v = pick_value(rng, size, orig, extra)
        if v != orig:
            break
    return "%s 0x%x -> %s" % (what, orig, label), [(at, pack(size, v))]


def m_ehdr(rng, core):
    name = rng.choice(["e_phoff", "e_phoff", "e_phnum", "e_phnum", "e_phentsize",
                       "e_shoff", "e_shoff", "e_shnum", "e_shentsize", "e_shstrndx"])
    at, size = EHDR_FIELDS[name]
    n = len(core.data)
    extra = [n, n - 1, n - 56, core.phoff + 1, 0xFFFF, 56 * 1000, 1]
    return field_edit(rng, core, "ehdr." + name, at, size, extra)


def m_phdr(rng, core):
    segs = core.loads + core.note_segs * max(1, len(core.loads) // 4)
    if not segs:
        return None
    p = rng.choice(segs)
    name = rng.choice(list(PHDR_FIELDS))
    off, size = PHDR_FIELDS[name]
    n = len(core.data)
    extra = [n, n - 1, p[name[2:]] + n, (1 << 63), 0x7FFFFFFFFFFF, 1 << 40,
             (p["vaddr"] + p["memsz"]) if name == "p_vaddr" else n - p["offset"] + 1]
    kind = "PT_NOTE" if p["type"] == PT_NOTE else "PT_LOAD"
    return field_edit(rng, core, "phdr[%d](%s).%s" % (p["index"], kind, name),
                      p["at"] + off, size, extra)


def m_note_size(rng, core):
    if not core.notes:
        return None
    i = rng.randrange(len(core.notes))
    n = core.notes[i]
    field = rng.choice(["namesz", "descsz", "descsz", "type"])
    at = n["at"] + {"namesz": 0, "descsz": 4, "type": 8}[field]
    seg_left = len(core.data) - n["at"]
    extra = [seg_left, seg_left + 4, 0xFFFFFFFC, 3, n["descsz"] + 4, 1 << 20]
    return field_edit(rng, core, "note[%d](type 0x%x).%s" % (i, n["type"], field),
                      at, 4, extra)


def m_regs(rng, core):
    if not core.threads:
        return None
    ti = rng.randrange(len(core.threads))
    t = core.threads[ti]
    reg = rng.choice(["rip", "rsp", "rsp", "rbp", "rbp"])
    at = t["note"]["desc_at"] + REG_OFF[reg]
    seg = core.load_for(t["rsp"])
    extra = [t["rsp"], t["rsp"] - 8, t["rsp"] + 1, 0x7FFFFFFFFFFF, 1 << 63]
    if seg:
        end = seg["vaddr"] + seg["filesz"]
        extra += [end - 8, end - 4, end, seg["vaddr"]]
    if core.exec_ranges:
        lo, hi = rng.choice(core.exec_ranges)
        extra.append(rng.randrange(lo, hi) if hi > lo else lo)
    return field_edit(rng, core, "thread[%d].%s" % (ti, reg), at, 8, extra)


def m_nt_file(rng, core):
    n = core.nt_file
    if n is None:
        return None
    d0 = n["desc_at"]
    count = core.u64(d0)
    choice = rng.choice(["count", "count", "page_size", "entry", "entry", "entry",
                         "strings"])
    if choice in ("count", "page_size"):
        at = d0 + (0 if choice == "count" else 8)
        return field_edit(rng, core, "NT_FILE." + choice, at, 8,
                          [count + 1, count * 2, 1 << 32, n["descsz"] // 24,
                           n["descsz"], 1 << 60])
    if choice == "entry" and count and 16 + 24 * count <= n["descsz"]:
        e = rng.randrange(count)
        k = rng.randrange(3)
        at = d0 + 16 + 24 * e + 8 * k
        start = core.u64(d0 + 16 + 24 * e)
        return field_edit(rng, core, "NT_FILE.entry[%d].%s" % (
            e, ("start", "end", "file_ofs")[k]), at, 8,
            [start - 1, start, 0, 1 << 63, start + (1 << 40)])
    # the filename strings: remove terminators or write garbage
    s0 = d0 + 16 + 24 * min(count, n["descsz"] // 24)
    s1 = d0 + n["descsz"]
    if s1 <= s0:
        return None
    if rng.random() < 0.5:
        zs = [i for i in range(s0, s1) if core.data[i] == 0]
        if not zs:
            return None
        picked = rng.sample(zs, min(len(zs), rng.choice([1, 3, len(zs)])))
        return ("NT_FILE.strings: %d NUL terminators -> 'A'" % len(picked),
                [(i, b"A") for i in picked])
    at = rng.randrange(s0, s1)
    ln = min(rng.choice([1, 8, 64]), s1 - at)
    return ("NT_FILE.strings: %d random bytes at +%d" % (ln, at - s0),
            [(at, rng.randbytes(ln))])


def m_auxv(rng, core):
    n = core.auxv
    if n is None:
        return None
    entries = n["descsz"] // 16
    e = rng.randrange(entries)
    k = rng.randrange(2)
    at = n["desc_at"] + 16 * e + 8 * k
    typ = core.u64(n["desc_at"] + 16 * e)
    return field_edit(rng, core, "auxv[%d](type %d).%s" % (e, typ, ("a_type", "a_val")[k]),
                      at, 8, [0, 3, 33, 1 << 63])   # AT_NULL, AT_PHDR, AT_SYSINFO_EHDR


def m_note_bytes(rng, core):
    """Random bytes anywhere in a note's descriptor (prpsinfo, siginfo, fpregs...)."""
    if not core.notes:
        return None
    i = rng.randrange(len(core.notes))
    n = core.notes[i]
    if n["descsz"] == 0:
        return None
    at = n["desc_at"] + rng.randrange(n["descsz"])
    ln = min(rng.choice([1, 4, 8, 32]), n["desc_at"] + n["descsz"] - at)
    return ("note[%d](type 0x%x) desc: %d random bytes at +%d"
            % (i, n["type"], ln, at - n["desc_at"]), [(at, rng.randbytes(ln))])


def stack_slots(core, t):
    """Interesting 8-byte slots on thread t's stack: [(addr, role)]."""
    rsp, rbp = t["rsp"], t["rbp"]
    seg = core.load_for(rsp)
    if seg is None:
        return [], None
    lo, hi = seg["vaddr"], seg["vaddr"] + seg["filesz"]
    slots = []
    fp, seen = rbp, set()
    for _ in range(32):                       # the frame-pointer chain
        if not (rsp <= fp and fp + 16 <= hi) or fp in seen or fp % 8:
            break
        seen.add(fp)
        slots += [(fp, "saved rbp"), (fp + 8, "return address")]
        fp = core.u64(core.file_off(fp))
    a = rsp - rsp % 8
    for addr in range(a, min(a + 4096, hi - 7), 8):   # scanned return addresses
        v = core.u64(core.file_off(addr))
        if core.in_exec(v):
            slots.append((addr, "code pointer"))
        elif lo <= v < hi and v >= rsp:
            slots.append((addr, "stack pointer"))
    if not slots:
        for addr in range(a, min(a + 512, hi - 7), 8):
            slots.append((addr, "word"))
    return slots, seg


# How often a stack slot of each role is picked (ELF cores say "saved rbp", minidumps
# "saved frame pointer").
STACK_ROLE_WEIGHTS = {"return address": 4, "saved rbp": 3, "saved frame pointer": 3,
                      "code pointer": 3, "stack pointer": 1, "word": 1}


def stack_slot_values(rng, slots, lo, hi, w, exec_ranges):
    """Pick some of a stack's (addr, role) slots and a new w-byte value for each.

    lo..hi is the stack memory, exec_ranges the (start, end) ranges of executable code.
    Returns (picked, mode, values): the picked slots sorted by address, the mode the values
    were made by, and one value per picked slot. Used by the ELF and the minidump stack
    mutators alike, so both draw from rng in the same order."""
    by_role = {}
    for s in slots:
        by_role.setdefault(s[1], []).append(s)
    roles = [r for r in by_role for _ in range(STACK_ROLE_WEIGHTS[r])]
    nslots = 1 if rng.random() < 0.6 else rng.choice([2, 4, 8, len(slots)])
    picked = set()
    for _ in range(nslots):
        group = by_role[rng.choice(roles)]
        # slots near the stack pointer matter most: bias toward the start of the group
        picked.add(group[min(rng.randrange(len(group)), rng.randrange(len(group)))])
    picked = sorted(picked)
    mode = rng.choice(["random", "zero", "self", "loop-back", "lower", "code",
                       "stack-top", "mixed"])
    values = []
    for i, (addr, role) in enumerate(picked):
        m = mode if mode != "mixed" else rng.choice(["random", "zero", "self", "code"])
        if m == "random":
            v = rng.getrandbits(8 * w)
        elif m == "zero":
            v = 0
        elif m == "self":                 # a slot that points to itself: a loop
            v = addr
        elif m == "loop-back":            # points back to the first picked slot
            v = picked[0][0] if i else picked[-1][0]
        elif m == "lower":                # a stack pointer that goes down
            v = max(lo, addr - w * rng.randrange(1, 64))
        elif m == "stack-top":            # last word(s) of the dumped segment
            v = hi - rng.choice([w, 4, 1])
        else:                             # some address inside executable code
            if exec_ranges:
                a, b = rng.choice(exec_ranges)
                v = rng.randrange(a, b) if b > a else a
            else:
                v = rng.getrandbits(47)
        values.append(v)
    return picked, mode, values


def m_stack(rng, core):
    if not core.threads:
        return None
    ti = rng.randrange(len(core.threads))
    t = core.threads[ti]
    slots, seg = stack_slots(core, t)
    if not slots:
        return None
    lo, hi = seg["vaddr"], seg["vaddr"] + seg["filesz"]
    picked, mode, values = stack_slot_values(rng, slots, lo, hi, 8, core.exec_ranges)
    edits = [(core.file_off(addr), pack(8, v)) for (addr, _), v in zip(picked, values)]
    roles = ",".join(sorted({role for _, role in picked}))
    return ("thread[%d] stack: %d slot(s) (%s) at rsp+0x%x.. -> %s"
            % (ti, len(picked), roles, picked[0][0] - t["rsp"], mode), edits)


def m_random_region(rng, core):
    """Random bytes at a random place of the header area (ehdr + phdrs + notes)."""
    end = max([core.phoff + core.phnum * core.phentsize]
              + [p["offset"] + p["filesz"] for p in core.note_segs])
    end = min(end, len(core.data))
    at = rng.randrange(end)
    ln = min(rng.choice([1, 2, 8, 64]), end - at)
    return "headers: %d random bytes at file offset 0x%x" % (ln, at), \
        [(at, rng.randbytes(ln))]


GENERATORS = [  # (name, weight, function)
    ("ehdr", 3, m_ehdr), ("phdr", 5, m_phdr), ("note-size", 4, m_note_size),
    ("regs", 4, m_regs), ("nt-file", 3, m_nt_file), ("auxv", 2, m_auxv),
    ("note-bytes", 2, m_note_bytes), ("stack", 8, m_stack),
    ("header-bytes", 1, m_random_region),
]


def truncations(core, rng, extra):
    """(description, truncate_at) at the places the brief names, plus `extra` random."""
    n = len(core.data)
    pts = [("inside the ELF header", rng.randrange(1, 64))]
    if core.phnum:
        ph_end = core.phoff + core.phnum * core.phentsize
        pts.append(("in the program headers", rng.randrange(core.phoff + 1, ph_end)))
    for seg in core.note_segs[:1]:
        if seg["filesz"] > 1:
            pts.append(("inside the note segment",
                        seg["offset"] + rng.randrange(1, seg["filesz"])))
            if core.prstatus:
                pr = rng.choice(core.prstatus)
                pts.append(("inside an NT_PRSTATUS desc", pr["desc_at"] + REG_OFF["rip"] + 3))
    if core.dumped:
        mid_lo = min(p["offset"] for p in core.dumped)
        mid_hi = max(p["offset"] + p["filesz"] for p in core.dumped)
        pts.append(("in the middle of the memory segments", (mid_lo + mid_hi) // 2))
        seg = core.load_for(core.threads[0]["rsp"]) if core.threads else None
        if seg:
            pts.append(("inside thread[0]'s stack segment, at its rsp",
                        core.file_off(core.threads[0]["rsp"])))
    pts.append(("one byte short of the end", n - 1))
    for _ in range(extra):
        pts.append(("at a random point", rng.randrange(1, n)))
    return [("truncated %s (%d of %d bytes)" % (d, at, n), at) for d, at in pts]


def make_mutants(core, seed, quick):
    """The deterministic list of (description, edits, truncate_at) for a core."""
    rng = random.Random(seed * 1000003 + zlib.crc32(core.name.encode()))
    total = 40 if quick else 150
    out = [(d, [], at) for d, at in truncations(core, rng, 0 if quick else 8)]
    names = [g for g in GENERATORS for _ in range(g[1])]
    while len(out) < total:
        k = 1 if quick or rng.random() < 0.8 else rng.choice([2, 3])
        descs, edits = [], []
        for _ in range(k):
            for _attempt in range(20):
                r = rng.choice(names)[2](rng, core)
                if r:
                    descs.append(r[0])
                    edits += r[1]
                    break
        if edits:
            out.append((" + ".join(descs), edits, None))
    return out


# --------------------------------------------------------------------------
# Minidumps (Windows, Breakpad, Crashpad): just enough parsing to know where
# to aim. Every read is checked: the corpus holds dumps that are already
# broken (invalid-range.dmp, invalid-record-count.dmp) and they must still
# get mutants.

MDMP_MAGIC = b"MDMP"
MD_THREAD_LIST, MD_MODULE_LIST, MD_MEMORY_LIST, MD_EXCEPTION = 3, 4, 5, 6
MD_SYSTEM_INFO, MD_THREAD_EX_LIST, MD_MEMORY64_LIST = 7, 8, 9
MD_UNLOADED_MODULES, MD_MISC_INFO, MD_MEMORY_INFO_LIST = 14, 15, 16
MD_THREAD_NAMES, MD_CRASHPAD_INFO = 24, 0x43500001
MD_BREAKPAD_INFO, MD_LINUX_MAPS, MD_LINUX_DSO_DEBUG = 0x47670001, 0x47670009, 0x4767000A
MD_STREAM_NAMES = {
    3: "ThreadList", 4: "ModuleList", 5: "MemoryList", 6: "Exception", 7: "SystemInfo",
    8: "ThreadExList", 9: "Memory64List", 14: "UnloadedModuleList", 15: "MiscInfo",
    16: "MemoryInfoList", 21: "SystemMemoryInfo", 22: "ProcessVmCounters",
    24: "ThreadNameList", 0x43500001: "CrashpadInfo", 0x47670001: "BreakpadInfo",
    0x47670002: "AssertionInfo", 0x47670003: "LinuxCpuInfo", 0x47670004: "LinuxProcStatus",
    0x47670005: "LinuxLsbRelease", 0x47670006: "LinuxCmdLine", 0x47670007: "LinuxEnviron",
    0x47670008: "LinuxAuxv", 0x47670009: "LinuxMaps", 0x4767000A: "LinuxDsoDebug",
    0x4767000B: "LinuxProcStat", 0x4767000C: "LinuxProcUptime", 0x4767000D: "LinuxProcLimits",
}
# list streams: type -> (entry size, count size); entries follow the count,
# or 4 bytes later when the writer padded the count to 8 bytes
MD_LISTS = {MD_THREAD_LIST: 48, MD_MODULE_LIST: 108, MD_MEMORY_LIST: 16,
            MD_THREAD_EX_LIST: 64, MD_THREAD_NAMES: 12}
# CONTEXT layouts by size: (arch, word size, ContextFlags offset, {role: (name, offset)})
MD_CONTEXTS = {
    0x4D0: ("amd64", 8, 0x30, {"ip": ("rip", 0xF8), "sp": ("rsp", 0x98), "fp": ("rbp", 0xA0)}),
    0x2CC: ("x86", 4, 0x00, {"ip": ("eip", 0xB8), "sp": ("esp", 0xC4), "fp": ("ebp", 0xB4)}),
    0x390: ("arm64", 8, 0x00, {"ip": ("pc", 0x108), "sp": ("sp", 0x100), "fp": ("fp", 0xF0)}),
}


def md_name(typ):
    return MD_STREAM_NAMES.get(typ, "0x%x" % typ)


def align8(n):
    return (n + 7) & ~7


def utf16_string(text):
    raw = text.encode("utf-16-le")
    return struct.pack("<I", len(raw)) + raw + b"\0\0"


class Minidump(DumpFile):
    kind = "minidump"
    ext = ".dmp"

    def __init__(self, path):
        super().__init__(path)
        d = self.data
        if len(d) < 32 or d[:4] != MDMP_MAGIC:
            raise CoreError("not a minidump")
        self.nstreams, self.dir_rva = struct.unpack_from("<II", d, 8)
        self.dirs = []
        for i in range(min(self.nstreams, 4096)):
            at = self.dir_rva + 12 * i
            if at + 12 > len(d):
                break
            typ, size, rva = struct.unpack_from("<III", d, at)
            self.dirs.append(dict(index=i, at=at, type=typ, size=size, rva=rva))
        self.streams = {}                 # type -> first directory entry inside the file
        for e in self.dirs:
            if e["type"] and e["rva"] + e["size"] <= len(d) and e["size"]:
                self.streams.setdefault(e["type"], e)
        self.lists = {}                   # type -> dict(count_at, entries_at, esize, count)
        for typ, esize in MD_LISTS.items():
            e = self.streams.get(typ)
            if not e or e["size"] < 4:
                continue
            count = self.u32(e["rva"])
            pad = 4 if e["size"] == 8 + count * esize else 0
            n = max(0, min(count, (e["size"] - 4 - pad) // esize))
            self.lists[typ] = dict(count_at=e["rva"], entries_at=e["rva"] + 4 + pad,
                                   esize=esize, count=n, stream=e)
        self.ranges = []                  # (address, size, file offset) of dumped memory
        for i in range(self.count(MD_MEMORY_LIST)):
            at = self.entry(MD_MEMORY_LIST, i)
            start, size, rva = struct.unpack_from("<QII", d, at)
            self.ranges.append((start, size, rva))
        self.mem64 = None
        e = self.streams.get(MD_MEMORY64_LIST)
        if e and e["size"] >= 16:
            count, base = struct.unpack_from("<QQ", d, e["rva"])
            n = min(count, (e["size"] - 16) // 16)
            self.mem64 = dict(stream=e, count=n, base=base)
            off = base
            for i in range(n):
                start, size = struct.unpack_from("<QQ", d, e["rva"] + 16 + 16 * i)
                self.ranges.append((start, size, off))
                off += size
        self.ranges = [r for r in self.ranges if r[2] + r[1] <= len(d)]
        self.contexts = []                # dicts: what, loc_at (size, rva), at, size, layout
        self.threads = []
        for typ in (MD_THREAD_LIST, MD_THREAD_EX_LIST):
            for i in range(self.count(typ)):
                at = self.entry(typ, i)
                tid, = struct.unpack_from("<I", d, at)
                sstart, ssize, srva, csize, crva = struct.unpack_from("<QIIII", d, at + 24)
                t = dict(index=i, at=at, tid=tid, list=md_name(typ), stack_start=sstart,
                         stack_size=ssize, stack_rva=srva, ctx=None)
                t["ctx"] = self.add_context("%s[%d]" % (md_name(typ), i), at + 40)
                if srva + ssize <= len(d) and ssize:
                    self.ranges.append((sstart, ssize, srva))
                else:
                    t["stack_size"] = 0
                self.threads.append(t)
        e = self.streams.get(MD_EXCEPTION)
        self.exception = e if e and e["size"] >= 168 else None
        if self.exception:
            self.add_context("Exception", e["rva"] + 160)
        self.modules = []
        for i in range(self.count(MD_MODULE_LIST)):
            at = self.entry(MD_MODULE_LIST, i)
            base, size, _ck, _ts, name_rva = struct.unpack_from("<QIIII", d, at)
            cv_size, cv_rva, misc_size, misc_rva = struct.unpack_from("<IIII", d, at + 76)
            self.modules.append(dict(index=i, at=at, base=base, size=size, name_rva=name_rva,
                                     cv_size=cv_size, cv_rva=cv_rva, misc_size=misc_size,
                                     misc_rva=misc_rva))
        self.exec_ranges = [(m["base"], m["base"] + m["size"]) for m in self.modules
                            if m["size"] and m["base"] + m["size"] < 1 << 64]
        self.strings = []                 # (what, offset of a u32 RVA of a MINIDUMP_STRING)
        for m in self.modules:
            self.strings.append(("ModuleList[%d].name" % m["index"], m["at"] + 20))
        for i in range(self.count(MD_THREAD_NAMES)):
            self.strings.append(("ThreadNameList[%d].name" % i,
                                 self.entry(MD_THREAD_NAMES, i) + 4))
        e = self.streams.get(MD_SYSTEM_INFO)
        self.arch = None
        if e and e["size"] >= 28:
            self.arch = self.u16(e["rva"])
            self.strings.append(("SystemInfo.CSDVersion", e["rva"] + 24))
        e = self.streams.get(MD_UNLOADED_MODULES)
        if e and e["size"] >= 12:
            hsize, esize, count = struct.unpack_from("<III", d, e["rva"])
            if esize >= 24:
                for i in range(min(count, 256, (e["size"] - hsize) // esize)):
                    self.strings.append(("UnloadedModuleList[%d].name" % i,
                                         e["rva"] + hsize + esize * i + 20))
        self.strings = [s for s in self.strings if s[1] + 4 <= len(d)]
        self.tail = align8(len(d))        # where appended data goes

    # checked readers: None when outside the file
    def u16(self, off):
        return struct.unpack_from("<H", self.data, off)[0] if 0 <= off <= len(self.data) - 2 else None

    def u32(self, off):
        return struct.unpack_from("<I", self.data, off)[0] if 0 <= off <= len(self.data) - 4 else None

    def u64(self, off):
        return struct.unpack_from("<Q", self.data, off)[0] if 0 <= off <= len(self.data) - 8 else None

    def count(self, typ):
        return self.lists[typ]["count"] if typ in self.lists else 0

    def entry(self, typ, i):
        lst = self.lists[typ]
        return lst["entries_at"] + i * lst["esize"]

    def add_context(self, what, loc_at):
        size, rva = struct.unpack_from("<II", self.data, loc_at)
        c = dict(what=what, loc_at=loc_at, at=rva, size=size,
                 layout=MD_CONTEXTS.get(size) if rva + size <= len(self.data) else None)
        self.contexts.append(c)
        return c

    def file_off(self, addr, width=8):
        for start, size, off in self.ranges:
            if start <= addr and addr + width <= start + size:
                return off + addr - start
        return None

    def range_for(self, addr):
        for r in self.ranges:
            if r[0] <= addr < r[0] + r[1]:
                return r
        return None

    def in_exec(self, v):
        return any(lo <= v < hi for lo, hi in self.exec_ranges)

    def thread_regs(self, t):
        c = t["ctx"]
        if not c or not c["layout"]:
            return None
        _arch, w, _fl, regs = c["layout"]
        fmt = "<Q" if w == 8 else "<I"
        return {role: struct.unpack_from(fmt, self.data, c["at"] + off)[0]
                for role, (_n, off) in regs.items()}

    def append(self, payload):
        """Where `payload` goes when appended to the (untruncated) file."""
        at = self.tail
        self.tail = align8(at + len(payload))
        return at


def md_field(rng, md, what, at, size, extra=()):
    if at is None or at + size > len(md.data):
        return None
    return field_edit(rng, md, what, at, size, extra)


def md_set(at, size, v):
    return (at, pack(size, v & ((1 << (8 * size)) - 1)))


def m_md_header(rng, md):
    n = len(md.data)
    name, at = rng.choice([("NumberOfStreams", 8), ("NumberOfStreams", 8),
                           ("StreamDirectoryRva", 12), ("StreamDirectoryRva", 12),
                           ("Version", 4), ("Flags", 24)])
    size = 8 if name == "Flags" else 4
    extra = [n, n - 1, n - 12, md.nstreams + 1, md.nstreams * 2, 0x10000, 0xFFFFFFFF,
             md.dir_rva + 1, md.dir_rva + 12, 0]
    return md_field(rng, md, "header." + name, at, size, extra)


def m_md_dir(rng, md):
    """A directory entry: type (duplicate or changed), DataSize, RVA."""
    if not md.dirs:
        return None
    e = rng.choice(md.dirs)
    n = len(md.data)
    what = "dir[%d](%s)" % (e["index"], md_name(e["type"]))
    field = rng.choice(["type", "type", "size", "size", "rva", "rva"])
    if field == "type":
        others = [o for o in md.dirs if o["type"] != e["type"] and o["type"]]
        kinds = ["duplicate", "duplicate", "known"]
        if rng.choice(kinds) == "duplicate" and others:
            o = rng.choice(others)
            return ("%s.type -> %s (duplicate of dir[%d])" % (what, md_name(o["type"]), o["index"]),
                    [md_set(e["at"], 4, o["type"])])
        v = rng.choice([t for t in MD_STREAM_NAMES if t != e["type"]] + [0, 0xFFFFFFFF])
        return ("%s.type -> %s" % (what, md_name(v)), [md_set(e["at"], 4, v)])
    if field == "size":
        return md_field(rng, md, what + ".DataSize", e["at"] + 4, 4,
                        [0xFFFFFFFF, 0x7FFFFFFF, n, n - e["rva"] + 1, e["size"] - 1, 3, 0,
                         e["size"] * 1000])
    others = [o["rva"] for o in md.dirs if o is not e]
    return md_field(rng, md, what + ".Rva", e["at"] + 8, 4,
                    [n, n - 1, n - 4, 0xFFFFFFFF, 0xFFFFFFF0, 0, e["rva"] + 1,
                     md.dir_rva] + others[:3])


def md_rewrite_dir(md, entries, extra_payloads=()):
    """Edits that append payloads and a new directory (entries: (type, size, rva)
    with rva None meaning 'the payload of the same index'), and point the header
    at it."""
    edits, rvas = [], []
    for p in extra_payloads:
        at = md.append(p)
        edits.append((at, p))
        rvas.append(at)
    out, k = [], 0
    for typ, size, rva in entries:
        if rva is None:
            rva = rvas[k]
            k += 1
        out.append(struct.pack("<III", typ, size, rva))
    blob = b"".join(out)
    at = md.append(blob)
    edits.append((at, blob))
    edits.append((8, struct.pack("<II", len(entries), at)))
    return edits


def m_md_duplicate(rng, md):
    """A second directory entry of a type that is already there (same or other data)."""
    real = [e for e in md.dirs if e["type"] in md.streams]
    if not real:
        return None
    e = rng.choice(real)
    ents = [(o["type"], o["size"], o["rva"]) for o in md.dirs]
    how = rng.choice(["same data", "other stream's data", "empty", "first"])
    if how == "same data":
        dup = (e["type"], e["size"], e["rva"])
    elif how == "other stream's data":
        o = rng.choice(md.dirs)
        dup = (e["type"], o["size"], o["rva"])
    elif how == "empty":
        dup = (e["type"], 0, 0)
    else:
        dup = (e["type"], e["size"], e["rva"])
    if how == "first":
        ents.insert(0, (e["type"], 4, md.dir_rva))   # a bogus one first
    else:
        ents.append(dup)
    return ("directory: a second %s entry (%s)" % (md_name(e["type"]), how),
            md_rewrite_dir(md, ents))


def m_md_count(rng, md):
    """Counts of list streams: 0, too large, huge; MemoryInfoList/Unloaded sizes."""
    cands = [t for t in MD_LISTS if t in md.lists]
    for t in (MD_MEMORY64_LIST, MD_MEMORY_INFO_LIST, MD_UNLOADED_MODULES):
        if t in md.streams and md.streams[t]["size"] >= 16:
            cands.append(t)
    if not cands:
        return None
    t = rng.choice(cands)
    e = md.streams[t]
    if t in md.lists:
        lst = md.lists[t]
        room = (len(md.data) - lst["entries_at"]) // lst["esize"]
        return md_field(rng, md, "%s.count" % md_name(t), lst["count_at"], 4,
                        [0, 0, lst["count"] + 1, room, room + 1, 0xFFFFFFFF, 0x7FFFFFFF,
                         1 << 28, 0x10000000 // lst["esize"] + 1])
    if t == MD_MEMORY64_LIST:
        field = rng.choice(["count", "count", "BaseRva"])
        at = e["rva"] + (0 if field == "count" else 8)
        return md_field(rng, md, "Memory64List." + field, at, 8,
                        [0, md.mem64["count"] + 1, 1 << 32, 1 << 60, 0xFFFFFFFFFFFFFFFF,
                         len(md.data), len(md.data) - 1, 1 << 28])
    if t == MD_MEMORY_INFO_LIST:
        field, at, size = rng.choice([("SizeOfHeader", 0, 4), ("SizeOfEntry", 4, 4),
                                      ("SizeOfEntry", 4, 4), ("NumberOfEntries", 8, 8)])
        return md_field(rng, md, "MemoryInfoList." + field, e["rva"] + at, size,
                        [0, 1, 4, 15, 47, 49, 0xFFFFFFFF, 0x10000, e["size"], 1 << 32,
                         0xFFFFFFFFFFFFFFFF])
    field, at = rng.choice([("SizeOfHeader", 0), ("SizeOfEntry", 4), ("NumberOfEntries", 8)])
    return md_field(rng, md, "UnloadedModuleList." + field, e["rva"] + at, 4,
                    [0, 1, 23, 0xFFFFFFFF, 0x10000, e["size"] + 1])


def m_md_string(rng, md):
    """A MINIDUMP_STRING: its RVA anywhere, or its length odd, huge or zero."""
    if not md.strings:
        return None
    what, rva_at = rng.choice(md.strings)
    rva = md.u32(rva_at)
    n = len(md.data)
    if rng.random() < 0.5 or rva is None or rva + 4 > n:
        other = [md.u32(a) for _w, a in md.strings]
        return md_field(rng, md, what + ".rva", rva_at, 4,
                        [n, n - 1, n - 2, n - 4, n - 5, 0xFFFFFFFF, 0, 1, rva + 1, rva + 2,
                         rng.randrange(n), md.dir_rva] + [o + 2 for o in other[:4] if o])
    ln = md.u32(rva)
    kind = rng.choice(["odd", "huge", "huge", "to-end", "zero", "surrogate", "nul"])
    if kind == "odd":
        v = ln | 1 if ln % 2 == 0 else ln + 2
    elif kind == "huge":
        v = rng.choice([0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFFFE, 1 << 20, 0x80000000])
    elif kind == "to-end":
        v = n - rva - 4 + rng.choice([0, 1, 2, 4])
    elif kind == "zero":
        v = 0
    else:
        if ln < 2 or rva + 4 + ln > n:
            return None
        i = rva + 4 + 2 * rng.randrange(ln // 2)
        ch = 0xD800 if kind == "surrogate" else 0
        return ("%s: UTF-16 unit %d -> 0x%04x" % (what, (i - rva - 4) // 2, ch),
                [md_set(i, 2, ch)])
    return ("%s: length %d -> %s %d" % (what, ln, kind, v), [md_set(rva, 4, v)])


def m_md_context_loc(rng, md):
    """A thread's or the exception's context location: too small, huge, outside."""
    if not md.contexts:
        return None
    c = rng.choice(md.contexts)
    n = len(md.data)
    if rng.random() < 0.5:
        return md_field(rng, md, c["what"] + ".context.DataSize", c["loc_at"], 4,
                        [0, 4, 0x30, 0x34, 0x100, c["size"] - 1, c["size"] + 1, c["size"] - 8,
                         0xFFFFFFFF, 0x4D0, 0x2CC, 0x390])
    return md_field(rng, md, c["what"] + ".context.Rva", c["loc_at"] + 4, 4,
                    [n, n - 1, n - c["size"] // 2, n - 4, 0xFFFFFFFF, 0, c["at"] + 1,
                     c["at"] - 8, md.dir_rva])


def m_md_regs(rng, md):
    """rip/rsp/rbp (or eip/esp/ebp) of a context; ContextFlags."""
    ctxs = [c for c in md.contexts if c["layout"]]
    if not ctxs:
        return None
    c = rng.choice(ctxs)
    arch, w, flags_at, regs = c["layout"]
    if rng.random() < 0.15:
        return md_field(rng, md, c["what"] + ".ContextFlags", c["at"] + flags_at, 4,
                        [0, 0x100000, 0x10001F, 0x10000B, 0x100001, 0x7FFFFFFF])
    role = rng.choice(["ip", "ip", "sp", "sp", "fp"])
    name, off = regs[role]
    thread = next((t for t in md.threads if t["ctx"] is c), None)
    if thread is None and md.threads:
        thread = md.threads[0]
    extra = [0, 1, (1 << (8 * w)) - 1, 1 << (8 * w - 1)]
    if thread and thread["stack_size"]:
        lo, sz = thread["stack_start"], thread["stack_size"]
        extra += [lo, lo + sz, lo + sz - w, lo + sz // 2, lo - w, lo + sz + 0x1000]
    if md.exec_ranges:
        a, b = rng.choice(md.exec_ranges)
        extra += [a, b, b - 1, rng.randrange(a, b) if b > a else a]
    r = md_field(rng, md, "%s.%s" % (c["what"], name), c["at"] + off, w, extra)
    return r


def md_stack_slots(md, t, w):
    regs = md.thread_regs(t)
    if not regs or not t["stack_size"]:
        return []
    lo, hi = t["stack_start"], t["stack_start"] + t["stack_size"]
    sp, fp = regs["sp"], regs["fp"]
    if not lo <= sp < hi:
        sp = lo
    rd = (lambda a: md.u64(t["stack_rva"] + a - lo)) if w == 8 else \
        (lambda a: md.u32(t["stack_rva"] + a - lo))
    slots, seen = [], set()
    for _ in range(32):
        if not (sp <= fp and fp + 2 * w <= hi) or fp in seen or fp % w:
            break
        seen.add(fp)
        slots += [(fp, "saved frame pointer"), (fp + w, "return address")]
        fp = rd(fp)
    a = sp - sp % w
    for addr in range(a, min(a + 4096, hi - w + 1), w):
        v = rd(addr)
        if md.in_exec(v):
            slots.append((addr, "code pointer"))
        elif lo <= v < hi and v >= sp:
            slots.append((addr, "stack pointer"))
    if not slots:
        slots = [(addr, "word") for addr in range(a, min(a + 512, hi - w + 1), w)]
    return slots


def m_md_stack(rng, md):
    """Words of a thread's stack memory: return addresses, saved frame pointers."""
    ts = [t for t in md.threads if t["ctx"] and t["ctx"]["layout"] and t["stack_size"]]
    if not ts:
        return None
    t = rng.choice(ts)
    w = t["ctx"]["layout"][1]
    slots = md_stack_slots(md, t, w)
    if not slots:
        return None
    lo, hi = t["stack_start"], t["stack_start"] + t["stack_size"]
    picked, mode, values = stack_slot_values(rng, slots, lo, hi, w, md.exec_ranges)
    edits = [md_set(t["stack_rva"] + addr - lo, w, v) for (addr, _), v in zip(picked, values)]
    sp = md.thread_regs(t)["sp"]
    return ("%s[%d] stack: %d slot(s) (%s) at sp+0x%x.. -> %s"
            % (t["list"], t["index"], len(picked), ",".join(sorted({role for _, role in picked})),
               picked[0][0] - sp, mode), edits)


def m_md_memory(rng, md):
    """MemoryList / Memory64List / thread stack descriptors: overlaps, outside, wrap."""
    cands = []
    for i in range(md.count(MD_MEMORY_LIST)):
        at = md.entry(MD_MEMORY_LIST, i)
        cands.append(("MemoryList[%d]" % i, at, at + 8, at + 12, 4))
    if md.mem64:
        for i in range(min(md.mem64["count"], 4096)):
            at = md.mem64["stream"]["rva"] + 16 + 16 * i
            cands.append(("Memory64List[%d]" % i, at, at + 8, None, 8))
    for t in md.threads:
        cands.append(("%s[%d].stack" % (t["list"], t["index"]), t["at"] + 24, t["at"] + 32,
                      t["at"] + 36, 4))
    if not cands:
        return None
    what, start_at, size_at, rva_at, size_w = rng.choice(cands)
    start, size = md.u64(start_at), (md.u32(size_at) if size_w == 4 else md.u64(size_at))
    if start is None or size is None:
        return None
    others = [r for r in md.ranges if r[0] != start]
    kind = rng.choice(["overlap", "overlap", "overlap", "wrap", "size", "rva"])
    if kind == "overlap" and others:
        o = rng.choice(others)
        how = rng.choice(["same start", "inside", "grow"])
        if how == "same start":
            return ("%s.start 0x%x -> 0x%x (overlaps range at 0x%x)" % (what, start, o[0], o[0]),
                    [md_set(start_at, 8, o[0])])
        if how == "inside":
            v = o[0] + (o[1] // 2 & ~7)
            return ("%s.start 0x%x -> 0x%x (inside range at 0x%x)" % (what, start, v, o[0]),
                    [md_set(start_at, 8, v)])
        nxt = [r for r in md.ranges if r[0] > start]
        if nxt and size_w == 4:
            nx = min(nxt)
            v = min(nx[0] - start + 0x100, 0xFFFFFFFF)
            if rva_at is None or md.u32(rva_at) + v <= len(md.data):
                return ("%s.size 0x%x -> 0x%x (overlaps the next range)" % (what, size, v),
                        [md_set(size_at, 4, v)])
        return ("%s.start 0x%x -> 0x%x (one page lower, overlapping)"
                % (what, start, start + 8 - max(size, 16)), [md_set(start_at, 8, start + 8 - max(size, 16))])
    if kind == "wrap":
        v = (1 << 64) - max(size // 2, 8)
        return ("%s.start 0x%x -> 0x%x (wraps around 2^64)" % (what, start, v),
                [md_set(start_at, 8, v)])
    if kind == "size" or rva_at is None:
        n = len(md.data)
        return md_field(rng, md, what + ".size", size_at, size_w,
                        [0, size + 1, size * 16, n, 0xFFFFFFFF, 1 << 40 if size_w == 8 else 1 << 31,
                         0xFFFFFFFFFFFFFFFF])
    n = len(md.data)
    return md_field(rng, md, what + ".rva", rva_at, 4,
                    [n, n - size // 2, n - 1, 0xFFFFFFFF, 0, md.dir_rva, rng.randrange(n)])


def m_md_codeview(rng, md):
    """CodeView records (RSDS, BpEL, NB10): truncated, huge, outside, without NUL.
    A module without one gets an appended RSDS or BpEL record first."""
    if not md.modules:
        return None
    m = rng.choice(md.modules)
    what = "ModuleList[%d].cv" % m["index"]
    n = len(md.data)
    edits = []
    cv_rva, cv_size = m["cv_rva"], m["cv_size"]
    if not cv_size or cv_rva + cv_size > n:
        if rng.random() < 0.5:
            rec = b"RSDS" + rng.randbytes(16) + struct.pack("<I", 1) + b"C:\\x\\y.pdb\0"
        else:
            rec = b"LEpB" + rng.randbytes(20)
        cv_rva = md.append(rec + b"\0" * 8)
        cv_size = len(rec)
        edits += [(cv_rva, rec + b"\0" * 8), md_set(m["at"] + 76, 4, cv_size),
                  md_set(m["at"] + 80, 4, cv_rva)]
        what += "(appended)"
        n = cv_rva + len(rec) + 8
    sig = (md.data[cv_rva:cv_rva + 4] if cv_rva + 4 <= len(md.data) else rec[:4]).decode("latin-1")
    kind = rng.choice(["truncated", "truncated", "huge", "outside", "no-nul", "signature",
                       "misc"])
    if kind == "truncated":
        v = rng.choice([0, 1, 3, 4, 5, 8, 20, 23, 24, 25, cv_size - 1])
        return ("%s(%s) size %d -> %d" % (what, sig, cv_size, v),
                edits + [md_set(m["at"] + 76, 4, v)])
    if kind == "huge":
        v = rng.choice([0xFFFFFFFF, 0x7FFFFFFF, n - cv_rva + 1, 1 << 20, 0x10000])
        return ("%s(%s) size %d -> 0x%x" % (what, sig, cv_size, v),
                edits + [md_set(m["at"] + 76, 4, v)])
    if kind == "outside":
        v = rng.choice([n, n - 1, n - 4, n - 23, 0xFFFFFFFF, 0xFFFFFFFC, 0])
        return ("%s(%s) rva 0x%x -> 0x%x" % (what, sig, cv_rva, v),
                edits + [md_set(m["at"] + 80, 4, v)])
    if kind == "no-nul":
        # the name runs to the end of the record and the file: no terminator
        fill = b"A" * max(0, cv_size - 24)
        if sig == b"RSDS" and fill:
            return ("%s(RSDS) name without NUL, size -> rest of file" % what,
                    edits + [(cv_rva + 24, fill), md_set(m["at"] + 76, 4, n - cv_rva)])
        return ("%s(%s) size -> rest of file (0x%x)" % (what, sig, n - cv_rva),
                edits + [md_set(m["at"] + 76, 4, n - cv_rva)])
    if kind == "signature":
        v = rng.choice([b"RSDS", b"LEpB", b"NB10", b"NB09", b"\0\0\0\0"])
        return ("%s signature %s -> %s" % (what, sig, v.decode()), edits + [(cv_rva, v)])
    v = rng.choice([(cv_size, cv_rva), (0xFFFFFFFF, cv_rva), (8, n - 4), (20, 0xFFFFFFFF)])
    return ("ModuleList[%d].misc record (size, rva) -> (0x%x, 0x%x)" % (m["index"], v[0], v[1]),
            edits + [(m["at"] + 84, struct.pack("<II", *v))])


def m_md_module(rng, md):
    """Module base/size: overlapping another module, wrapping around 2^64, 0, huge."""
    if not md.modules:
        return None
    m = rng.choice(md.modules)
    what = "ModuleList[%d]" % m["index"]
    o = rng.choice(md.modules)
    kind = rng.choice(["same base", "overlap", "wrap", "wrap", "size", "identity"])
    if kind == "same base" and o is not m:
        return ("%s.base 0x%x -> 0x%x (same as module %d)" % (what, m["base"], o["base"], o["index"]),
                [md_set(m["at"], 8, o["base"])])
    if kind in ("overlap", "same base"):
        v = o["base"] + o["size"] // 2
        return ("%s.base 0x%x -> 0x%x (inside module %d)" % (what, m["base"], v, o["index"]),
                [md_set(m["at"], 8, v)])
    if kind == "wrap":
        v = (1 << 64) - rng.choice([0x1000, max(m["size"] // 2, 1), 1])
        return ("%s.base 0x%x -> 0x%x (base + size wraps around 2^64)" % (what, m["base"], v),
                [md_set(m["at"], 8, v)])
    if kind == "size":
        return md_field(rng, md, what + ".size", m["at"] + 8, 4,
                        [0, 1, 0xFFFFFFFF, 0x80000000, m["size"] * 64])
    return md_field(rng, md, what + rng.choice([".TimeDateStamp", ".CheckSum"]),
                    m["at"] + rng.choice([16, 12]), 4, [0, 0xFFFFFFFF])


def m_md_synth(rng, md):
    """Append a stream the dump lacks (Memory64List, MemoryInfoList, ThreadNameList,
    UnloadedModuleList) and corrupt it: its parser gets exercised on every dump."""
    ents = [(o["type"], o["size"], o["rva"]) for o in md.dirs]
    kind = rng.choice(["Memory64List", "Memory64List", "MemoryInfoList", "ThreadNameList",
                       "UnloadedModuleList"])
    n = len(md.data)
    if kind == "Memory64List":
        mem, seen = [], set()
        for r in md.ranges:          # thread stacks repeat MemoryList ranges
            if r[0] not in seen and len(mem) < 100000:
                seen.add(r[0])
                mem.append(r)
        if not mem:
            return None
        base = md.tail + align8(16 + 16 * len(mem))
        entries = [[s, z] for s, z, _o in mem]
        count, bad = len(mem), rng.choice(["none", "count", "base", "size", "overlap", "wrap",
                                           "sum"])
        b = base
        if bad == "count":
            count = rng.choice([len(mem) + 1, 1 << 32, 0xFFFFFFFFFFFFFFFF, 1 << 28])
        elif bad == "base":
            b = rng.choice([n, 0xFFFFFFFF, 1 << 40, base + 1, 0xFFFFFFFFFFFFFFFF])
        elif bad == "size":
            i = rng.randrange(len(entries))
            entries[i][1] = rng.choice([1 << 40, 0xFFFFFFFFFFFFFFFF, entries[i][1] + 1])
        elif bad == "overlap" and len(entries) > 1:     # the second range inside the first
            entries[1][0] = entries[0][0] + 8
        elif bad == "wrap":
            entries[-1][0] = (1 << 64) - 8
        elif bad == "sum":   # sizes whose sum wraps around 2^64
            entries[0][1] = (1 << 64) - 16
        head = struct.pack("<QQ", count, b) + b"".join(struct.pack("<QQ", s, z) for s, z in entries)
        data = b"".join(md.data[o:o + z] for _s, z, o in mem)
        ents = [e for e in ents if e[0] != MD_MEMORY_LIST] + [(MD_MEMORY64_LIST, len(head), None)]
        head = head + b"\0" * (align8(len(head)) - len(head))
        edits = md_rewrite_dir(md, ents, [head, data])
        return ("appended Memory64List (%d ranges, MemoryList dropped): %s" % (len(mem), bad), edits)
    if kind == "MemoryInfoList":
        mem = md.ranges[:32] or [(0x10000, 0x1000, 0)]
        hsize, esize = 16, 48
        bad = rng.choice(["none", "esize-small", "esize-huge", "hsize", "count", "regions"])
        rows = [struct.pack("<QQIIQIIII", s, s, 4, 0, z, 0x1000, 4, 0x20000, 0) for s, z, _o in mem]
        count = len(rows)
        if bad == "esize-small":
            esize = rng.choice([0, 1, 8, 47])
        elif bad == "esize-huge":
            esize = rng.choice([0xFFFFFFFF, 0x10000, 49])
        elif bad == "hsize":
            hsize = rng.choice([0, 4, 0xFFFFFFFF, 1 << 20])
        elif bad == "count":
            count = rng.choice([count + 1, 1 << 32, 0xFFFFFFFFFFFFFFFF])
        elif bad == "regions":
            rows[0] = struct.pack("<QQIIQIIII", (1 << 64) - 0x1000, 0, 4, 0,
                                  0x2000, 0x1000, 4, 0x20000, 0)
        blob = struct.pack("<IIQ", hsize, esize, count) + b"".join(rows)
        return ("appended MemoryInfoList: %s" % bad,
                md_rewrite_dir(md, ents + [(MD_MEMORY_INFO_LIST, len(blob), None)], [blob]))
    if kind == "ThreadNameList":
        tids = [t["tid"] for t in md.threads][:16] or [1]
        name = utf16_string("worker")
        strings_at = md.tail + align8(4 + 12 * len(tids))
        bad = rng.choice(["none", "rva", "length", "count", "duplicate tid"])
        rows = []
        for i, tid in enumerate(tids):
            r = strings_at
            if bad == "rva" and i == 0:
                r = rng.choice([n, 0xFFFFFFFFFFFFFFFF, 1 << 32, strings_at + 1, 0])
            rows.append(struct.pack("<IQ", tids[0] if bad == "duplicate tid" else tid, r))
        count = rng.choice([len(tids) + 1, 0xFFFFFFFF]) if bad == "count" else len(tids)
        blob = struct.pack("<I", count) + b"".join(rows)
        blob += b"\0" * (align8(len(blob)) - len(blob))
        if bad == "length":
            name = struct.pack("<I", rng.choice([0xFFFFFFFF, 13, 1 << 20])) + name[4:]
        return ("appended ThreadNameList: %s" % bad,
                md_rewrite_dir(md, ents + [(MD_THREAD_NAMES, 4 + 12 * len(tids), None)],
                               [blob, name]))
    # UnloadedModuleList
    name_at = md.tail
    name = utf16_string("gone.dll")
    bad = rng.choice(["name rva", "esize", "count", "wrap"])
    rows = struct.pack("<QIIII", 0x10000000, 0x1000, 0, 0,
                       rng.choice([n, 0xFFFFFFFF]) if bad == "name rva" else name_at)
    if bad == "wrap":
        rows = struct.pack("<QIIII", 0xFFFFFFFFFFFFF000, 0x2000, 0, 0, name_at)
    hdr = struct.pack("<III", 12, rng.choice([0, 1, 0xFFFFFFFF]) if bad == "esize" else 24,
                      0xFFFFFFFF if bad == "count" else 1)
    blob = hdr + rows
    return ("appended UnloadedModuleList: %s" % bad,
            md_rewrite_dir(md, ents + [(MD_UNLOADED_MODULES, len(blob), None)], [name, blob]))


def m_md_stream_bytes(rng, md):
    """Random bytes in any stream (SystemInfo, MiscInfo, Exception, Breakpad's and
    Crashpad's, Linux /proc text); text streams also lose newlines or get huge numbers."""
    ss = [e for e in md.streams.values()]
    if not ss:
        return None
    e = rng.choice(ss)
    at = e["rva"] + rng.randrange(e["size"])
    what = "%s stream" % md_name(e["type"])
    if 0x47670003 <= e["type"] <= 0x4767000D and e["type"] not in (0x47670008, 0x4767000A) \
            and rng.random() < 0.5:
        body = md.data[e["rva"]:e["rva"] + e["size"]]
        nl = [i for i, c in enumerate(body) if c == 10]
        if nl and rng.random() < 0.5:
            picked = rng.sample(nl, min(len(nl), rng.choice([1, 3, len(nl)])))
            return ("%s: %d newline(s) -> NUL/space" % (what, len(picked)),
                    [(e["rva"] + i, rng.choice([b"\0", b" "])) for i in picked])
        hexes = [i for i in range(len(body) - 8) if body[i:i + 1].isalnum()]
        if hexes:
            i = rng.choice(hexes)
            v = rng.choice([b"ffffffffffffffffff", b"-1", b"99999999999999999999"])
            v = v[:e["size"] - i]
            return ("%s: %r at +%d" % (what, v, i), [(e["rva"] + i, v)])
    if e["type"] == MD_EXCEPTION and e["size"] >= 168 and rng.random() < 0.5:
        field, off, size = rng.choice([("ThreadId", 0, 4), ("NumberParameters", 24, 4),
                                       ("ExceptionAddress", 16, 8), ("ExceptionRecord", 8, 8)])
        return md_field(rng, md, "Exception." + field, e["rva"] + off, size,
                        [0, 15, 16, 0xFFFFFFFF, rng.getrandbits(32)])
    if e["type"] == MD_SYSTEM_INFO and rng.random() < 0.5:
        return md_field(rng, md, "SystemInfo.ProcessorArchitecture", e["rva"], 2,
                        [0, 5, 9, 12, 0xFFFF, 0x8003, 6])
    if e["type"] == MD_CRASHPAD_INFO and e["size"] >= 52 and rng.random() < 0.6:
        off = rng.choice([36, 40, 44, 48])
        return md_field(rng, md, "CrashpadInfo.%s.%s" % (
            "simple_annotations" if off < 44 else "module_list",
            "size" if off % 8 == 4 else "rva"), e["rva"] + off, 4,
            [0, 0xFFFFFFFF, len(md.data), len(md.data) - 4, 1 << 20])
    if e["type"] == MD_LINUX_DSO_DEBUG and e["size"] >= 16 and rng.random() < 0.6:
        off, what2 = rng.choice([(4, "dso_count"), (8, "map rva")])
        return md_field(rng, md, "LinuxDsoDebug." + what2, e["rva"] + off, 4,
                        [0, 0xFFFFFFFF, 0x10000000, len(md.data)])
    ln = min(rng.choice([1, 4, 8, 32]), e["rva"] + e["size"] - at)
    return ("%s: %d random bytes at +%d" % (what, ln, at - e["rva"]),
            [(at, rng.randbytes(ln))])


MD_GENERATORS = [  # (name, weight, function, appends to the file)
    ("header", 2, m_md_header, False), ("dir", 5, m_md_dir, False),
    ("duplicate", 2, m_md_duplicate, True), ("count", 5, m_md_count, False),
    ("string", 4, m_md_string, False), ("context-loc", 3, m_md_context_loc, False),
    ("regs", 5, m_md_regs, False), ("stack", 8, m_md_stack, False),
    ("memory", 5, m_md_memory, False), ("codeview", 4, m_md_codeview, True),
    ("module", 4, m_md_module, False), ("synth", 4, m_md_synth, True),
    ("stream-bytes", 3, m_md_stream_bytes, False),
]


def md_truncations(md, rng, quick, extra):
    n = len(md.data)
    pts = [("inside the header", rng.randrange(1, 32))]
    if md.dirs:
        pts.append(("in the stream directory",
                    md.dir_rva + rng.randrange(1, 12 * len(md.dirs))))
    ss = sorted(md.streams.values(), key=lambda e: e["index"])
    if quick:   # the streams a walk needs, then two others
        key = [e for e in ss if e["type"] in (3, 4, 5, 6, 7, 9)]
        ss = key + rng.sample([e for e in ss if e not in key],
                              min(2, len(ss) - len(key)))
    for e in ss:
        if e["size"] > 1:
            pts.append(("inside the %s stream" % md_name(e["type"]),
                        e["rva"] + rng.randrange(1, e["size"])))
    for t in md.threads[:1]:
        if t["stack_size"] > 1:
            pts.append(("in the middle of %s[%d]'s stack memory" % (t["list"], t["index"]),
                        t["stack_rva"] + t["stack_size"] // 2))
    if md.ranges:
        s, z, o = max(md.ranges, key=lambda r: r[2])
        if z > 1:
            pts.append(("inside the last memory range", o + rng.randrange(1, z)))
    pts.append(("one byte short of the end", n - 1))
    for _ in range(extra):
        pts.append(("at a random point", rng.randrange(1, n)))
    seen, out = set(), []
    for d, at in pts:
        if 0 < at < n and at not in seen:
            seen.add(at)
            out.append(("truncated %s (%d of %d bytes)" % (d, at, n), at))
    return out


def make_md_mutants(md, seed, quick):
    rng = random.Random(seed * 1000003 + zlib.crc32(md.name.encode()))
    total = 40 if quick else 150
    out = [(d, [], at) for d, at in md_truncations(md, rng, quick, 0 if quick else 8)]
    names = [g for g in MD_GENERATORS for _ in range(g[1])]
    while len(out) < total:
        k = 1 if quick or rng.random() < 0.8 else rng.choice([2, 3])
        descs, edits, appended = [], [], False
        md.tail = align8(len(md.data))
        for _ in range(k):
            for _attempt in range(20):
                g = rng.choice(names)
                if g[3] and appended:
                    continue
                r = g[2](rng, md)
                if r:
                    descs.append(r[0])
                    edits += r[1]
                    appended = appended or g[3]
                    break
        if edits:
            out.append((" + ".join(descs), edits, None))
    return out


def load_dump(path):
    with open(path, "rb") as f:
        magic = f.read(4)
    return Minidump(path) if magic == MDMP_MAGIC else Core(path)


def build(core, mutant):
    _desc, edits, trunc = mutant
    buf = bytearray(core.data if trunc is None else core.data[:trunc])
    for at, b in edits:
        if at is None:
            continue
        if trunc is None and at + len(b) > len(buf):
            # data appended past the end (minidump streams, CodeView records)
            buf.extend(b"\0" * (at + len(b) - len(buf)))
        if at < len(buf):
            buf[at:at + len(b)] = b[:len(buf) - at]
    return bytes(buf)


# --------------------------------------------------------------------------
# Running and checking.

def limits(as_limit):
    def fn():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if as_limit:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
    return fn


def check(rc, out, err, timed_out):
    """None if the run was fine, else a short description of the failure."""
    if timed_out:
        return "timeout after %g s" % TIMEOUT_S
    if rc < 0:
        what = "killed by %s (signal %d)" % (SIGNAMES.get(-rc, "signal"), -rc)
        last = [l for l in err.decode(errors="replace").splitlines() if l.strip()]
        if b"terminate called" in err:
            what += ", uncaught C++ exception"
        return what + (": " + " | ".join(last[-2:])[:240] if last else "")
    for marker in (b"AddressSanitizer", b"LeakSanitizer", b"UndefinedBehaviorSanitizer",
                   b"MemorySanitizer", b"ThreadSanitizer", b"runtime error:"):
        if marker in err:
            line = next((l for l in err.splitlines() if marker in l), b"")
            return "sanitizer report (exit %d): %s" % (
                rc, line.decode(errors="replace")[:200])
    if b"terminate called" in err:
        return "uncaught C++ exception (exit %d): %s" % (
            rc, err.decode(errors="replace").strip().replace("\n", " | ")[:200])
    if rc not in (0, 3):
        return "exit code %d (want 0 or 3); stderr: %s" % (
            rc, err.decode(errors="replace").strip().replace("\n", " | ")[:200])
    if rc == 0:
        try:
            doc = json.loads(out)
        except ValueError as e:
            return "exit 0 but stdout is not JSON (%s)" % e
        if not isinstance(doc, dict) or not isinstance(doc.get("threads"), list):
            return "exit 0 but the JSON has no \"threads\" array"
        return None
    text = err.decode(errors="replace")
    lines = text.splitlines()
    if len(lines) != 1 or not lines[0].startswith("stackwalk: ") or \
            text.count("\n") > 1:
        return "exit 3 but stderr is not one 'stackwalk: ' line: %r" % text[:200]
    return None


class Job:
    pass


def run_all(jobs, stackwalk, opts, as_limit, parallel, on_done):
    """Run every job (mutant_path set), at most `parallel` at a time.

    Output goes to files rather than pipes so that one loop can watch many
    children with no threads (preexec_fn is unsafe with threads)."""
    pending, running = list(jobs), []
    while pending or running:
        while pending and len(running) < parallel:
            j = pending.pop(0)
            j.argv = [stackwalk, j.path, "-a", "--json"] + opts
            j.out = open(j.path + ".out", "w+b")
            j.err = open(j.path + ".err", "w+b")
            j.start = time.monotonic()
            j.proc = subprocess.Popen(j.argv, stdin=subprocess.DEVNULL, stdout=j.out,
                                      stderr=j.err, preexec_fn=limits(as_limit))
            running.append(j)
        time.sleep(0.002)
        for j in list(running):
            rc = j.proc.poll()
            timed_out = rc is None and time.monotonic() - j.start > TIMEOUT_S
            if rc is None and not timed_out:
                continue
            if timed_out:
                j.proc.kill()
                rc = j.proc.wait()
            running.remove(j)
            j.elapsed = time.monotonic() - j.start
            j.out.seek(0)
            j.err.seek(0)
            out, err = j.out.read(), j.err.read()
            j.out.close()
            j.err.close()
            j.rc, j.timed_out = rc, timed_out
            j.failure = check(rc, out, err, timed_out)
            on_done(j)


def gdb_backtrace(argv):
    if not shutil.which("gdb"):
        return "(gdb not found)"
    try:
        r = subprocess.run(["gdb", "-batch", "-nx", "-ex", "run", "-ex", "bt"]
                           + ["--args"] + argv, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "(gdb timed out)"
    lines = [l for l in r.stdout.decode(errors="replace").splitlines()
             if l.startswith("#") or "signal" in l.lower()]
    return "\n".join("    " + l for l in lines[:25])


def is_asan(stackwalk):
    try:
        with open(stackwalk, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stackwalk")
    ap.add_argument("cores", nargs="+", metavar="CORE")
    ap.add_argument("--sysroot")
    ap.add_argument("--module-path", action="append", default=[])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="about 40 mutants per core")
    ap.add_argument("--keep", metavar="DIR", help="copy failing mutants here")
    ap.add_argument("--only", action="append", default=[], metavar="ID",
                    help="run only mutant CORENAME:INDEX (repeatable)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--backtrace", action="store_true",
                    help="for each crash, print gdb's backtrace")
    ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every mutant")
    a = ap.parse_args()

    stackwalk = os.path.abspath(a.stackwalk)
    if not os.access(stackwalk, os.X_OK):
        ap.error("not an executable: %s" % a.stackwalk)
    opts = []
    if a.sysroot:
        opts += ["--sysroot", os.path.abspath(a.sysroot)]
    for m in a.module_path:
        opts += ["--module-path", os.path.abspath(m)]
    as_limit = AS_LIMIT
    if is_asan(stackwalk):
        as_limit = 0
        print("note: %s is an ASan build: no RLIMIT_AS (ASan reserves terabytes)"
              % a.stackwalk)
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)

    t0 = time.monotonic()
    total = failures = 0
    tmp = tempfile.mkdtemp(prefix="stackwalk-mutate-")
    # run a snapshot: the build tree's binary may be relinked while we run
    run_bin = os.path.join(tmp, "stackwalk")
    shutil.copy2(stackwalk, run_bin)
    me = os.path.abspath(sys.argv[0])

    def repro_cmd(j):
        if a.keep:
            return " ".join(shlex.quote(x) for x in [a.stackwalk, j.kept, "-a", "--json"] + opts)
        cmd = ["python3", me, a.stackwalk, "--seed", str(a.seed)]
        cmd += (["--quick"] if a.quick else []) + ["--only", j.id, "--keep", "/tmp/mutants"]
        if a.sysroot:
            cmd += ["--sysroot", a.sysroot]
        for m in a.module_path:
            cmd += ["--module-path", m]
        return " ".join(shlex.quote(x) for x in cmd + [j.core.path])

    def on_done(j):
        nonlocal failures
        if a.verbose:
            print("%s rc=%s %.2fs %s" % (j.id, j.rc, j.elapsed, j.desc), flush=True)
        if j.failure:
            failures += 1
            if a.keep:
                j.kept = os.path.join(a.keep, j.id.replace(":", ".") + j.core.ext)
                shutil.copyfile(j.path, j.kept)
            print("FAIL %s: %s: %s\n    repro: %s"
                  % (j.id, j.desc, j.failure, repro_cmd(j)), flush=True)
            if a.backtrace and (j.rc < 0 or "sanitizer" in j.failure or j.timed_out):
                print(gdb_backtrace(j.argv), flush=True)
        os.unlink(j.path)
        for ext in (".out", ".err"):
            os.unlink(j.path + ext)

    try:
        for path in a.cores:
            try:
                core = load_dump(path)
            except (OSError, CoreError, struct.error) as e:
                print("error: %s: %s" % (path, e), file=sys.stderr)
                return 2
            if isinstance(core, Minidump):
                mutants = make_md_mutants(core, a.seed, a.quick)
            else:
                mutants = make_mutants(core, a.seed, a.quick)
            jobs = []
            # the unmutated core first: a failure there is not a mutation finding
            for idx, m in [(-1, ("unmutated (baseline)", [], None))] + list(enumerate(mutants)):
                mid = "%s:%s" % (core.name, "base" if idx < 0 else idx)
                if a.only and mid not in a.only:
                    continue
                if a.list:
                    print(mid, m[0])
                    continue
                j = Job()
                j.id, j.desc, j.core = mid, m[0], core
                j.path = os.path.join(tmp, mid.replace(":", ".") + core.ext)
                with open(j.path, "wb") as f:
                    f.write(build(core, m))
                jobs.append(j)
            total += sum(1 for j in jobs if not j.id.endswith(":base"))
            run_all(jobs, run_bin, opts, as_limit, max(1, a.jobs), on_done)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.list:
        return 0
    print("mutants %d, failures %d (%.1f s)" % (total, failures, time.monotonic() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
