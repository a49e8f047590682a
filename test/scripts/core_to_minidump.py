#!/usr/bin/env python3
"""Writes a Linux x86-64, arm64 or i386 ELF core as a Breakpad-style minidump: what Breakpad's
minidump_stackwalk reads (issue 21's oracle), with no help from stackwalk.

Usage: core_to_minidump.py CORE OUT.dmp ROOT... [--executable FILE]

Threads and their registers come from NT_PRSTATUS, the crash from the
thread with a pending signal, modules from NT_FILE (each file's base is its
mapping at file offset 0; its build-id, read from the first ROOT that holds
the recorded path or its file name, becomes its CodeView record) or, in a core
without that note (qemu-user's), from the dynamic linker's list of loaded
objects in the core's memory (the executable, given, placed by AT_ENTRY), and each thread's stack
from the core's memory: from 128 bytes below the stack pointer (the red
zone) to the end of its segment, at most 256 KiB; the auxiliary vector (NT_AUXV) as
Breakpad's writer keeps /proc/PID/auxv. No code bytes: the oracle
walks by its .sym files' CFI, like a pipeline without binaries.
"""
import os
import struct
import sys

PT_LOAD, PT_DYNAMIC, PT_NOTE = 1, 2, 4
NT_PRSTATUS, NT_PRFPREG, NT_AUXV, NT_FILE, NT_GNU_BUILD_ID = 1, 2, 6, 0x46494C45, 3
EM_386, EM_X86_64, EM_AARCH64 = 3, 62, 183
AT_ENTRY, AT_SYSINFO_EHDR, DT_DEBUG = 9, 33, 21
MD_LINUX_AUXV = 0x47670008
# user_regs_struct order in NT_PRSTATUS, and each register's offset in CONTEXT_AMD64.
USER_REGS = ["r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx", "rdx", "rsi", "rdi",
             "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs"]
CONTEXT_OFFSETS = {"rax": 120, "rcx": 128, "rdx": 136, "rbx": 144, "rsp": 152, "rbp": 160, "rsi": 168, "rdi": 176,
                   "r8": 184, "r9": 192, "r10": 200, "r11": 208, "r12": 216, "r13": 224, "r14": 232, "r15": 240,
                   "rip": 248}
CONTEXT_SIZE = 1232
CONTEXT_AMD64_FULL = 0x0010000B  # CONTEXT_AMD64 | CONTROL | INTEGER | FLOATING_POINT
FLT_SAVE = 0x100  # XMM_SAVE_AREA32: the FXSAVE layout, as NT_PRFPREG holds it
# arm64: user_pt_regs in NT_PRSTATUS, and CONTEXT_ARM64 (Breakpad's MDRawContextARM64
# since 2019): flags, cpsr, x0-x28, fp, lr, sp, pc, then the FP/SIMD and debug registers.
ARM64_REGS = [f"x{i}" for i in range(31)] + ["sp", "pc", "pstate"]
ARM64_CONTEXT_SIZE = 0x390
# i386: user_regs_struct in NT_PRSTATUS (its pr_reg at 72 in the 32-bit elf_prstatus).
I386_REGS = ["ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "ds", "es", "fs", "gs", "orig_eax", "eip", "cs",
             "eflags", "esp", "ss"]
CONTEXT_ARM64_CONTROL_INTEGER = 0x00400003
# System info: the processor architecture (MD_CPU_ARCHITECTURE_*) and the context writer of each machine.
PROCESSOR = {EM_386: 0, EM_X86_64: 9, EM_AARCH64: 12}
MAX_STACK = 256 * 1024


def elf_machine(data):
    return struct.unpack_from("<H", data, 18)[0]


def elf_is_64(data):
    return data[4] == 2  # EI_CLASS: ELFCLASS64


def elf_segments(data):
    """(type, file offset, vaddr, file size, memory size) of each program header, either class."""
    if elf_is_64(data):
        phoff, = struct.unpack_from("<Q", data, 32)
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
        layout, fields = "<IIQQQQQQ", (0, 2, 3, 5, 6)
    else:
        phoff, = struct.unpack_from("<I", data, 28)
        phentsize, phnum = struct.unpack_from("<HH", data, 42)
        layout, fields = "<IIIIIIII", (0, 1, 2, 4, 5)
    for i in range(phnum):
        header = struct.unpack_from(layout, data, phoff + i * phentsize)
        yield tuple(header[f] for f in fields)


def notes(blob):
    at = 0
    while at + 12 <= len(blob):
        namesz, descsz, kind = struct.unpack_from("<III", blob, at)
        name_end = at + 12 + ((namesz + 3) & ~3)
        yield kind, blob[name_end:name_end + descsz]
        at = name_end + ((descsz + 3) & ~3)


def build_id(path):
    with open(path, "rb") as f:
        data = f.read()
    for kind, offset, _, filesz, _ in elf_segments(data):
        if kind == PT_NOTE:
            for note, desc in notes(data[offset:offset + filesz]):
                if note == NT_GNU_BUILD_ID:
                    return desc
    return None


def elf_section(data, wanted):
    """(file offset, size) of the section named `wanted`, either class; None without it."""
    if elf_is_64(data):
        shoff, = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        layout = "<IIQQQQ"  # name, type, flags, address, offset, size
    else:
        shoff, = struct.unpack_from("<I", data, 32)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 46)
        layout = "<IIIIII"
    if not shoff or shstrndx >= shnum:
        return None
    headers = [struct.unpack_from(layout, data, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    for name, _, _, _, offset, size in headers:
        if data[names + name:data.index(b"\0", names + name)] == wanted:
            return offset, size
    return None


def identity(path):
    """The module's identity as Breakpad's client records it: its GNU build-id,
    else (Go's and Mono's files have none) the XOR of the first page of its
    .text in 16-byte blocks, which dump_syms also names its .sym by."""
    ident = build_id(path)
    if ident:
        return ident
    with open(path, "rb") as f:
        data = f.read()
    text = elf_section(data, b".text")
    if not text:
        return None
    offset, size = text
    hashed = bytearray(16)
    for at, byte in enumerate(data[offset:offset + min(size, 4096)]):
        hashed[at % 16] ^= byte
    return bytes(hashed)


class Core:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.machine = elf_machine(self.data)
        if self.machine not in PROCESSOR:
            raise SystemExit(f"{path}: an ELF core of machine {self.machine}, not x86-64, arm64 or i386")
        self.word_size = 8 if elf_is_64(self.data) else 4
        self.loads = []
        self.threads = []  # (tid, signal, registers, x87/SSE state: NT_PRFPREG's 512 bytes or b"")
        self.files = []  # (start, end, file offset in pages, path)
        self.auxv = {}
        self.auxv_bytes = b""
        for kind, offset, vaddr, filesz, memsz in elf_segments(self.data):
            if kind == PT_LOAD:
                self.loads.append((vaddr, vaddr + filesz, offset))
            elif kind == PT_NOTE:
                for note, desc in notes(self.data[offset:offset + filesz]):
                    if note == NT_PRSTATUS:
                        signal, = struct.unpack_from("<h", desc, 12)
                        if self.machine == EM_386:
                            tid, names, at, word = struct.unpack_from("<i", desc, 24)[0], I386_REGS, 72, "I"
                        else:
                            tid, at, word = struct.unpack_from("<i", desc, 32)[0], 112, "Q"
                            names = USER_REGS if self.machine == EM_X86_64 else ARM64_REGS
                        values = struct.unpack_from(f"<{len(names)}{word}", desc, at)
                        self.threads.append((tid, signal, dict(zip(names, values)), b""))
                    elif note == NT_PRFPREG and self.machine == EM_X86_64 and self.threads and len(desc) >= 512:
                        # the FXSAVE image of the thread whose NT_PRSTATUS came before it
                        self.threads[-1] = self.threads[-1][:3] + (desc[:512],)
                    elif note == NT_FILE:
                        self.files = self.file_mappings(desc, self.word_size)
                    elif note == NT_AUXV:
                        self.auxv_bytes = bytes(desc)
                        word = "Q" if self.word_size == 8 else "I"
                        pairs = struct.unpack_from(f"<{len(desc) // self.word_size}{word}", desc)
                        self.auxv = dict(zip(pairs[::2], pairs[1::2]))

    @staticmethod
    def file_mappings(desc, size):
        word = "Q" if size == 8 else "I"
        count, _ = struct.unpack_from(f"<{word}{word}", desc, 0)
        ranges = [struct.unpack_from(f"<{word * 3}", desc, size * (2 + 3 * i)) for i in range(count)]
        names = desc[size * (2 + 3 * count):].split(b"\0")
        return [(s, e, o, n.decode()) for (s, e, o), n in zip(ranges, names)]

    def read(self, address, size):
        for start, end, offset in self.loads:
            if start <= address and address + size <= end:
                return self.data[offset + address - start: offset + address - start + size]
        raise ValueError(f"{address:#x}: not in the core's memory")

    def word(self, address):
        """A pointer-sized word of the core's class."""
        return struct.unpack("<Q" if self.word_size == 8 else "<I", self.read(address, self.word_size))[0]

    def string(self, address):
        text = b""
        while b"\0" not in text:
            text += self.read(address + len(text), 1)
        return text[:-1].decode()

    @staticmethod
    def sp(registers):
        return registers.get("rsp", registers.get("esp", registers.get("sp")))

    def stack(self, sp):
        """The stack memory from the red zone below sp to its segment's end."""
        for start, end, offset in self.loads:
            if start <= sp < end:
                low = max(start, sp - 128)
                high = min(end, low + MAX_STACK)
                return low, self.data[offset + low - start: offset + high - start]
        return None


def local_file(roots, recorded):
    for root in roots:
        for candidate in (os.path.join(root, recorded.lstrip("/")), os.path.join(root, os.path.basename(recorded))):
            if os.path.isfile(candidate):
                return candidate
    return None


def load_extent(path):
    """(lowest vaddr, highest end) of an ELF file's PT_LOAD segments."""
    with open(path, "rb") as f:
        segments = [(vaddr, vaddr + memsz) for kind, _, vaddr, _, memsz in elf_segments(f.read()) if kind == PT_LOAD]
    return min(low for low, _ in segments), max(high for _, high in segments)


def linked_modules(core, executable):
    """(base, size, path, build-id) of the executable and each object in the dynamic
    linker's list (r_debug.r_map, found by the executable's DT_DEBUG), for cores without
    NT_FILE. The executable is placed by AT_ENTRY; each library at its l_addr. Either
    class: Elf_Dyn, r_debug and link_map are made of words of the core's size."""
    with open(executable, "rb") as f:
        data = f.read()
    size = core.word_size
    bias = core.auxv[AT_ENTRY] - struct.unpack_from("<Q" if size == 8 else "<I", data, 24)[0]
    dynamic = next(vaddr for kind, _, vaddr, _, _ in elf_segments(data) if kind == PT_DYNAMIC) + bias
    r_debug = None
    while r_debug is None:
        tag, value = core.word(dynamic), core.word(dynamic + size)
        if tag == 0:
            raise SystemExit(f"{executable}: no DT_DEBUG in its dynamic section")
        r_debug = value if tag == DT_DEBUG else None
        dynamic += 2 * size
    def name_at(address):
        """A C string in the core, or in the executable's read-only segments, which
        qemu leaves out (the dynamic linker's name points at .interp)."""
        try:
            return core.string(address)
        except ValueError:
            for kind, offset, vaddr, filesz, _ in elf_segments(data):
                if kind == PT_LOAD and vaddr <= address - bias < vaddr + filesz:
                    at = offset + address - bias - vaddr
                    return data[at:data.index(b"\0", at)].decode()
            raise

    out, link = [], core.word(r_debug + size)  # r_map, after the int r_version (padded to a word)
    while link:
        l_addr, l_name, _, l_next = (core.word(link + size * i) for i in range(4))
        path = name_at(l_name) or executable
        if os.path.isfile(path):
            low, high = load_extent(path)
            base = (bias if path == executable else l_addr) + low
            out.append((base, high - low, path, identity(path)))
        link = l_next
    return sorted(out)


def vdso(core):
    """(base, bytes) of the vDSO the core holds (from AT_SYSINFO_EHDR to its segment's end), or None."""
    base = core.auxv.get(AT_SYSINFO_EHDR)
    if base is None:
        return None
    for start, end, offset in core.loads:
        if start <= base < end:
            return base, core.data[offset + base - start:offset + end - start]
    return None


def write_vdso(core, path):
    """The core's vDSO written to `path`, named as Breakpad's Linux writer names its module:
    (base, size, "linux-gate.so", identity), or None when the core holds none."""
    found = vdso(core)
    if not found:
        return None
    base, image = found
    with open(path, "wb") as f:
        f.write(image)
    return base, len(image), "linux-gate.so", identity(path)


def modules(core, roots, executable=None):
    """(base, size, recorded path, identity) of each ELF file the core maps."""
    if not core.files and executable:
        return linked_modules(core, executable)
    extents = {}
    for start, end, page, path in core.files:
        low, high, first = extents.get(path, (start, end, None))
        extents[path] = (min(low, start), max(high, end), start if page == 0 and first is None else first)
    out = []
    for path, (low, high, first) in extents.items():
        local = local_file(roots, path)
        if first is None or not local:
            continue
        with open(local, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        out.append((first, high - first, path, identity(local)))
    return sorted(out)


class Writer:
    def __init__(self):
        self.blob = bytearray(32)  # the header, written last

    def put(self, data, align=8):
        while len(self.blob) % align:
            self.blob.append(0)
        at = len(self.blob)
        self.blob += data
        return at

    def string(self, text):
        encoded = text.encode("utf-16-le")
        return self.put(struct.pack("<I", len(encoded)) + encoded + b"\0\0", 4)


def codeview(path, ident):
    """An RSDS record: the build-id's first 16 bytes as the GUID, age 0, and the
    file's name, as Breakpad's Linux writer made them before BpEL records (the
    Breakpad of npm's minidump package reads no BpEL)."""
    if not ident:
        return b""
    guid = (ident + bytes(16))[:16]
    return b"RSDS" + guid + struct.pack("<I", 0) + os.path.basename(path).encode() + b"\0"


def arm64_context(registers):
    out = bytearray(ARM64_CONTEXT_SIZE)
    struct.pack_into("<II", out, 0, CONTEXT_ARM64_CONTROL_INTEGER, registers["pstate"] & 0xFFFFFFFF)
    struct.pack_into("<33Q", out, 8, *(registers[name] for name in ARM64_REGS[:33]))
    return bytes(out)


# CONTEXT_i386's offsets (Windows' x86 CONTEXT, 0x2cc bytes) of the registers NT_PRSTATUS holds.
X86_CONTEXT_OFFSETS = {"gs": 0x8C, "fs": 0x90, "es": 0x94, "ds": 0x98, "edi": 0x9C, "esi": 0xA0, "ebx": 0xA4,
                       "edx": 0xA8, "ecx": 0xAC, "eax": 0xB0, "ebp": 0xB4, "eip": 0xB8, "cs": 0xBC, "eflags": 0xC0,
                       "esp": 0xC4, "ss": 0xC8}
CONTEXT_I386_CONTROL_INTEGER_SEGMENTS = 0x10007


def x86_context(registers):
    out = bytearray(0x2CC)
    struct.pack_into("<I", out, 0, CONTEXT_I386_CONTROL_INTEGER_SEGMENTS)
    for name, offset in X86_CONTEXT_OFFSETS.items():
        struct.pack_into("<I", out, offset, registers[name] & 0xFFFFFFFF)
    return bytes(out)


def context(registers, fp_state):
    out = bytearray(CONTEXT_SIZE)
    out[FLT_SAVE:FLT_SAVE + len(fp_state)] = fp_state
    struct.pack_into("<I", out, 48, CONTEXT_AMD64_FULL)
    struct.pack_into("<HHHHHHI", out, 56, registers["cs"], registers["ds"], registers["es"], registers["fs"],
                     registers["gs"], registers["ss"], registers["eflags"] & 0xFFFFFFFF)
    for name, offset in CONTEXT_OFFSETS.items():
        struct.pack_into("<Q", out, offset, registers[name])
    return bytes(out)


def write(core_path, out_path, roots, executable=None, vdso_path=None):
    """With vdso_path, the vDSO's module too (Breakpad's writer lists it), its image written there."""
    core = Core(core_path)
    w = Writer()
    streams = []
    # System info: the processor, Linux (Breakpad's platform id 0x8201), an empty CSD version.
    csd = w.string("")
    streams.append((7, w.put(struct.pack("<HHHBBIIIIIHH24s", PROCESSOR[core.machine], 6, 0, 1, 0, 0, 0, 0, 0x8201,
                                         csd, 0, 0, b""))))
    memory, threads, crash = [], [], None
    for tid, signal, registers, fp_state in core.threads:
        raw = {EM_X86_64: lambda: context(registers, fp_state), EM_AARCH64: lambda: arm64_context(registers),
               EM_386: lambda: x86_context(registers)}[core.machine]()
        ctx = w.put(raw)
        stack = core.stack(Core.sp(registers))
        start, data = stack if stack else (0, b"")
        rva = w.put(data) if data else 0
        memory.append(struct.pack("<QII", start, len(data), rva))
        threads.append(struct.pack("<IIIIQQIIII", tid, 0, 0, 0, 0, start, len(data), rva, len(raw), ctx))
        if signal and crash is None:
            crash = (tid, signal, ctx, len(raw))
    streams.append((3, w.put(struct.pack("<I", len(threads)) + b"".join(threads))))
    streams.append((5, w.put(struct.pack("<I", len(memory)) + b"".join(memory))))
    entries = []
    listed = modules(core, roots, executable)
    gate = write_vdso(core, vdso_path) if vdso_path else None
    for base, size, path, ident in listed + ([gate] if gate else []):
        name = w.string(path)
        record = codeview(path, ident)
        cv = w.put(record, 4) if record else 0
        entries.append(struct.pack("<QIIII52sII8sQQ", base, size, 0, 0, name, b"", len(record), cv, b"", 0, 0))
    streams.append((4, w.put(struct.pack("<I", len(entries)) + b"".join(entries), 4)))
    if core.auxv_bytes:  # /proc/PID/auxv, as Breakpad's writer keeps it (MD_LINUX_AUXV)
        streams.append((MD_LINUX_AUXV, w.put(core.auxv_bytes, 4), len(core.auxv_bytes)))
    if crash:
        tid, signal, ctx, ctx_size = crash
        record = struct.pack("<IIQQII15Q", signal, 0, 0, 0, 0, 0, *([0] * 15))
        streams.append((6, w.put(struct.pack("<II", tid, 0) + record + struct.pack("<II", ctx_size, ctx))))
    directory = w.put(b"".join(struct.pack("<III", kind, size[0] if size else sizes(w, at, kind), at)
                               for kind, at, *size in streams), 4)
    struct.pack_into("<IIIIIIQ", w.blob, 0, 0x504D444D, 0xA793, len(streams), directory, 0, 0, 0)
    with open(out_path, "wb") as f:
        f.write(w.blob)


def sizes(w, at, kind):
    """The size of the stream written at `at`: fixed, or by the count it starts with."""
    fixed = {7: 56, 6: 168}
    if kind in fixed:
        return fixed[kind]
    count, = struct.unpack_from("<I", w.blob, at)
    return 4 + count * {3: 48, 5: 16, 4: 108}[kind]


if __name__ == "__main__":
    args = sys.argv[1:]
    executable = None
    if "--executable" in args:
        at = args.index("--executable")
        executable = args[at + 1]
        del args[at:at + 2]
    if len(args) < 3:
        sys.exit(__doc__)
    write(args[0], args[1], args[2:], executable)
