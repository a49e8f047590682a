#!/usr/bin/env python3
"""Mutation test for stackwalk: corrupt ELF core files and check it fails cleanly.

    mutate.py STACKWALK [--sysroot DIR] [--module-path DIR]... [--seed N] [--quick]
              [--keep DIR] [--only ID]... [-j N] [--backtrace] CORE...

For every core, with a fixed seed, it makes mutants (truncations, bit flips and
chosen values in the ELF header, program headers, notes and stack memory), runs
`STACKWALK MUTANT -a --json [--sysroot ..] [--module-path ..]` on each under a
10 s timeout, RLIMIT_AS = 1 GiB and no core dumps, and checks:

  1. no death by a signal (crash, abort) and no sanitizer report;
  2. the exit code is 0 or 3;
  3. no timeout;
  4. exit 0: stdout is JSON with a "threads" array;
     exit 3: stderr is exactly one line starting with "stackwalk: ".

One line per failing mutant, then `mutants N, failures F`; exit status 1 if any
failure (2 on a usage error). Mutant ids are `CORENAME:INDEX`; the same seed,
mode (--quick or not) and core always give the same mutants, so
`--only ID --keep DIR` rebuilds one for a debugger. See README.md.

Python 3 standard library only. Assumes 64-bit little-endian x86-64 cores.
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

class Core:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as f:
            self.data = f.read()
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


def m_stack(rng, core):
    if not core.threads:
        return None
    ti = rng.randrange(len(core.threads))
    t = core.threads[ti]
    slots, seg = stack_slots(core, t)
    if not slots:
        return None
    lo, hi = seg["vaddr"], seg["vaddr"] + seg["filesz"]
    by_role = {}
    for s in slots:
        by_role.setdefault(s[1], []).append(s)
    weights = {"return address": 4, "saved rbp": 3, "code pointer": 3,
               "stack pointer": 1, "word": 1}
    roles = [r for r in by_role for _ in range(weights[r])]
    nslots = 1 if rng.random() < 0.6 else rng.choice([2, 4, 8, len(slots)])
    picked = set()
    for _ in range(nslots):
        group = by_role[rng.choice(roles)]
        # slots near rsp matter most: bias toward the start of the group
        picked.add(group[min(rng.randrange(len(group)), rng.randrange(len(group)))])
    picked = sorted(picked)
    mode = rng.choice(["random", "zero", "self", "loop-back", "lower", "code",
                       "stack-top", "mixed"])
    edits, labels = [], []
    for i, (addr, role) in enumerate(picked):
        m = mode if mode != "mixed" else rng.choice(["random", "zero", "self", "code"])
        if m == "random":
            v = rng.getrandbits(64)
        elif m == "zero":
            v = 0
        elif m == "self":                 # a slot that points to itself: a loop
            v = addr
        elif m == "loop-back":            # points back to the first picked slot
            v = picked[0][0] if i else picked[-1][0]
        elif m == "lower":                # a stack pointer that goes down
            v = max(lo, addr - 8 * rng.randrange(1, 64))
        elif m == "stack-top":            # last word(s) of the dumped segment
            v = hi - rng.choice([8, 4, 1])
        else:                             # some address inside executable code
            if core.exec_ranges:
                a, b = rng.choice(core.exec_ranges)
                v = rng.randrange(a, b) if b > a else a
            else:
                v = rng.getrandbits(47)
        edits.append((core.file_off(addr), pack(8, v)))
        labels.append(role)
    roles = ",".join(sorted(set(labels)))
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


def build(core, mutant):
    _desc, edits, trunc = mutant
    buf = bytearray(core.data if trunc is None else core.data[:trunc])
    for at, b in edits:
        if at is not None and at < len(buf):
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
                j.kept = os.path.join(a.keep, j.id.replace(":", ".") + ".core")
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
                core = Core(path)
            except (OSError, CoreError, struct.error) as e:
                print("error: %s: %s" % (path, e), file=sys.stderr)
                return 2
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
                j.path = os.path.join(tmp, mid.replace(":", ".") + ".core")
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
