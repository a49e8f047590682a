#!/usr/bin/env python3
"""Craft hostile dumps from the project's test dumps: recorded module paths that point at
host files, forged or missing module identities, names full of terminal control and
format characters, and structures that claim far more than the dump holds (GDB JIT
entries, PE images, program headers, threads, module paths; issue 19). Deterministic: the
same inputs give the same bytes.

Usage: make-hostile.py DUMPS_DIR OUT_DIR [--traps TRAP_DIR]
  DUMPS_DIR  the unpacked test dumps (cores/crash-segv.core, cores/recursion-alloca.core, cores/jit-gdb.core,
             windows/dumps/crash-av.dmp, dotnet/cores/crash-normal.core)
  OUT_DIR    where host-paths.core, fake-buildid.core, no-buildid.core, escapes.core,
             escapes.dmp, escapes-dotnet.core, jit-claims.core, jit-shared.core,
             jit-zstd-bomb.core, vdso-zstd-bomb.core, many-ranges.core, many-ranges.dmp, many-threads.core, deep-threads.core,
             slash-modules.core, pe-claims.dmp and elf-claims.core are written
  TRAP_DIR   also traps.core, whose module paths lie in TRAP_DIR
"""
import collections
import os
import re
import struct
import sys

PT_LOAD, PT_NOTE = 1, 4
PF_W, PF_R = 2, 4
PN_XNUM = 0xFFFF
NT_PRSTATUS, NT_PRPSINFO, NT_AUXV, NT_FILE = 1, 3, 6, 0x46494C45
NT_GNU_BUILD_ID = 3
AT_SYSINFO_EHDR = 33
PAGE = 0x1000
# Elf64_Phdr: type, flags, offset, vaddr, paddr, filesz, memsz, align
PHDR = struct.Struct("<IIQQQQQQ")

# Paths that must never be opened, read or followed out of a sysroot.
HOST_PATHS = [
    "/etc/shadow",
    "/proc/self/mem",
    "/proc/self/environ",
    "/hostile-fifo",  # the test makes a FIFO here inside its sysroot: open() would block
    "/../../../../etc/passwd",
    "/lib/x86_64-linux-gnu/../../../../../../etc/hostname",
    "////proc/self/exe",
]

# Names that, printed raw, retitle or clear a terminal, start a CSI sequence (C1 CSI, raw
# and UTF-8), reorder the line (bidi override and isolates) or hide characters (DEL).
ESCAPE_NAMES = [
    b"/tmp/\x1b]0;PWNED-TITLE\x07\x1b[2J.so",
    b"/tmp/c1-raw-\x9b31m.so",
    b"/tmp/c1-utf8-\xc2\x9b31m.so",
    b"/tmp/bidi-\xe2\x80\xaeos.exe",
    b"/tmp/isolate-\xe2\x81\xa6x\xe2\x81\xa9.so",
    b"/tmp/del-\x7f.so",
]
ESCAPE_FNAME = b"pr\x1b[2J\x1b]0;T\x07"         # pr_fname: 15 bytes + NUL
ESCAPE_PSARGS = b"/bin/x \x1b]0;PWNED-ARGS\x07 \xe2\x80\xae"

# The same kinds of module names for a minidump (UTF-16): ESC/BEL, U+009B, U+202E,
# U+2066..U+2069, DEL, and an unpaired surrogate (UTF-16's invalid sequence).
DMP_MODULE_NAMES = [
    "C:\\hostile\\\x1b]0;PWNED-TITLE\x07\x1b[2J.dll",
    "C:\\hostile\\c1-\x9b31m.dll",
    "C:\\hostile\\bidi-\u202elld.exe",
    "C:\\hostile\\isolate-\u2066x\u2069.dll",
    "C:\\hostile\\del-\x7f.dll",
    "C:\\hostile\\surrogate-\ud800.dll",
]


def append(data, blob):
    """Append blob at an 8-aligned offset; return that offset (an RVA)."""
    data += bytes(-len(data) % 8)
    rva = len(data)
    data += blob
    return rva


def phdr_count(data):
    """e_phnum, or section header 0's sh_info when e_phnum is PN_XNUM."""
    phnum, = struct.unpack_from("<H", data, 56)
    if phnum != PN_XNUM:
        return phnum
    shoff, = struct.unpack_from("<Q", data, 40)
    return struct.unpack_from("<I", data, shoff + 44)[0]


def phdrs(data):
    """(header offset, p_type, p_offset, p_vaddr, p_filesz) of every program header."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, = struct.unpack_from("<H", data, 54)
    for i in range(phdr_count(data)):
        at = phoff + phentsize * i
        p_type, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, at)
        yield at, p_type, offset, vaddr, filesz


def with_program_headers(core, extra):
    """The core with its program header table moved to the end of the file and `extra`
    (packed Elf64_Phdr entries) added after the old headers. From PN_XNUM headers on,
    e_phnum is PN_XNUM and section header 0's sh_info holds the count, as the kernel
    writes it (a one-entry section header table is added when the core has none)."""
    data = bytearray(core)
    phoff, = struct.unpack_from("<Q", data, 32)
    table = bytes(data[phoff:phoff + PHDR.size * phdr_count(data)]) + extra
    count = len(table) // PHDR.size
    struct.pack_into("<Q", data, 32, append(data, table))
    struct.pack_into("<H", data, 56, min(count, PN_XNUM))
    if count >= PN_XNUM:
        if not struct.unpack_from("<H", data, 60)[0]:
            # e_shoff, then e_shentsize, e_shnum, e_shstrndx
            struct.pack_into("<Q", data, 40, append(data, bytes(64)))
            struct.pack_into("<HHH", data, 58, 64, 1, 0)
        shoff, = struct.unpack_from("<Q", data, 40)
        struct.pack_into("<I", data, shoff + 44, count)
    return bytes(data)


def with_loads(core, segments):
    """The core with new read-write PT_LOAD segments, (vaddr, bytes) each, their bytes
    appended at page-aligned offsets."""
    data = bytearray(core)
    extra = b""
    for vaddr, payload in segments:
        data += bytes(-len(data) % PAGE)
        size = len(payload)
        extra += PHDR.pack(PT_LOAD, PF_R | PF_W, len(data), vaddr, 0, size, size, PAGE)
        data += payload
    return with_program_headers(bytes(data), extra)


def dumped_extent(core, vaddr):
    """(file offset of the dumped byte at vaddr, bytes dumped from there to the end of
    its segment), or (None, 0)."""
    for _, p_type, offset, start, filesz in phdrs(core):
        if p_type == PT_LOAD and start <= vaddr < start + filesz:
            return offset + vaddr - start, start + filesz - vaddr
    return None, 0


def memory_at(core, vaddr, size=1):
    """The file offset of the dumped bytes [vaddr, vaddr + size), or None."""
    at, left = dumped_extent(core, vaddr)
    return at if size <= left else None


def dumped(core, vaddr, size):
    """The dumped bytes [vaddr, vaddr + size), or None when the core lacks some."""
    at = memory_at(core, vaddr, size)
    return None if at is None else bytes(core[at:at + size])


def notes(data, offset, size):
    """(note start, descriptor offset, descsz, type, note end) of the notes in a segment."""
    position = offset
    while position + 12 <= offset + size:
        namesz, descsz, note_type = struct.unpack_from("<III", data, position)
        desc = position + 12 + ((namesz + 3) & ~3)
        end = desc + ((descsz + 3) & ~3)
        yield position, desc, descsz, note_type, end
        position = end


def core_notes(data, wanted):
    """Descriptor offsets of the core's notes of one type."""
    for _, p_type, offset, _, size in phdrs(data):
        if p_type == PT_NOTE:
            for _, desc, _, note_type, _ in notes(data, offset, size):
                if note_type == wanted:
                    yield desc


def with_notes(core, rewrite):
    """The core with each PT_NOTE segment replaced by rewrite(data, its notes as notes()
    gives them), the new segment's bytes. The note segment grows, so it is appended at
    the end of the file and its program header repointed; the old segment's bytes stay
    where they were, unreferenced."""
    data = bytearray(core)
    for at, p_type, offset, _, size in list(phdrs(data)):
        if p_type == PT_NOTE:
            segment = rewrite(data, list(notes(data, offset, size)))
            data += bytes(-len(data) % 8)
            struct.pack_into("<Q", data, at + 8, len(data))      # p_offset
            struct.pack_into("<QQ", data, at + 32, len(segment), 0)  # p_filesz, p_memsz
            data += segment
    return bytes(data)


def file_names(core):
    """The distinct file names the core's NT_FILE note records, in order."""
    desc = next(core_notes(core, NT_FILE))
    count, _ = struct.unpack_from("<QQ", core, desc)
    names = bytes(core[desc + 16 + 24 * count:]).split(b"\0", count)[:count]
    return list(dict.fromkeys(names))


def renamed_files(core, new_names, extra_base=0x10000000):
    """The core with its NT_FILE note rebuilt: the distinct recorded files take the new
    names in turn (every entry of one file the same name, start/end/offset kept). Names
    left over get a one-page mapping each at an address the core has no memory for, so
    that every name becomes a module whose file a reader looks up."""
    def rewrite(data, found):
        segment = bytearray()
        for start, desc, descsz, note_type, end in found:
            if note_type != NT_FILE:
                segment += data[start:end]
                continue
            count, page_size = struct.unpack_from("<QQ", data, desc)
            entries = [struct.unpack_from("<QQQ", data, desc + 16 + 24 * i) for i in range(count)]
            names = bytes(data[desc + 16 + 24 * count:desc + descsz]).split(b"\0")[:count]
            distinct = list(dict.fromkeys(names))
            rename = {old: new_names[i % len(new_names)] for i, old in enumerate(distinct)}
            names = [rename[n] for n in names]
            for i, name in enumerate(new_names[len(distinct):]):
                page = extra_base + i * 0x10000
                entries.append((page, page + page_size, 0))
                names.append(name)
            descriptor = struct.pack("<QQ", len(entries), page_size)
            descriptor += b"".join(struct.pack("<QQQ", *e) for e in entries)
            descriptor += b"".join(n + b"\0" for n in names)
            segment += data[start:start + 4] + struct.pack("<I", len(descriptor))
            segment += data[start + 8:desc] + descriptor + bytes(-len(descriptor) % 4)
        return bytes(segment)
    return with_notes(core, rewrite)


BUILD_ID_NOTE = re.compile(rb"\x04\0\0\0([\x08-\x40])\0\0\0\x03\0\0\0GNU\0", re.S)


def with_build_ids(core, change):
    """The core with every GNU build-id note in its dumped memory (the modules' headers
    and note pages) passed through change(data, note_offset, desc_offset, descsz)."""
    data = bytearray(core)
    found = 0
    for _, p_type, offset, _, size in list(phdrs(data)):
        if p_type == PT_LOAD:
            for m in BUILD_ID_NOTE.finditer(bytes(data[offset:offset + size])):
                change(data, offset + m.start(), offset + m.end(), m.group(1)[0])
                found += 1
    assert found, "no build-id note in the core's memory"
    return bytes(data)


def host_paths(dumps):
    """Every recorded module path names a host file a reader must not touch: secrets
    (/etc/shadow, /proc/self/environ), /proc/self/mem, a FIFO (open blocks), /proc/self/exe
    (the reader itself) and ../ paths that climb out of --sysroot."""
    core = read(dumps, "cores/crash-segv.core")
    return renamed_files(core, [p.encode() for p in HOST_PATHS])


def traps(dumps, trap_dir):
    """Module paths inside TRAP_DIR, where a test may put what must never be opened: a
    FIFO, a copy of a secret, a link to /proc/self/mem, and a ../ path back into it. With
    --no-host-files the report must be the same whether they exist or not."""
    base = os.path.basename(trap_dir.rstrip("/"))
    names = [f"{trap_dir}/fifo", f"{trap_dir}/shadow", f"{trap_dir}/mem",
             f"{trap_dir}/sub/../../{base}/passwd", f"//{trap_dir}/libc.so.6"]
    return renamed_files(read(dumps, "cores/crash-segv.core"), [n.encode() for n in names])


# The same number of UTF-16 code units as the message it replaces.
DOTNET_MESSAGE = "stackwalk crash scenario f"
HOSTILE_MESSAGE = "\x1b]0;PWN\x07\x9b31m\u202eevil\u2066x\u2069\x1b[2J!!"


def escapes_dotnet(dumps):
    """A .NET crash whose exception message (a System.String in the managed heap, UTF-16)
    carries an OSC title sequence, a C1 CSI, a bidi override and isolates."""
    assert len(HOSTILE_MESSAGE) == len(DOTNET_MESSAGE)
    data = read(dumps, "dotnet/cores/crash-normal.core")
    old, new = DOTNET_MESSAGE.encode("utf-16-le"), HOSTILE_MESSAGE.encode("utf-16-le")
    assert old in data, "the exception message is not in the dump"
    return data.replace(old, new)


def fake_buildid(dumps):
    """Every module's build-id in the dump is forged (each byte XOR 0x5a): no file, in the
    sysroot, module paths or debug trees, matches, so all must be rejected."""
    def flip(data, _, desc, size):
        data[desc:desc + size] = bytes(b ^ 0x5A for b in data[desc:desc + size])
    return with_build_ids(read(dumps, "cores/crash-segv.core"), flip)


def no_buildid(dumps):
    """Every module's build-id note in the dump has an unknown type (0x7fff): the dump
    records no identity, so files found by path are unchecked."""
    def hide(data, note, _, __):
        struct.pack_into("<I", data, note + 8, 0x7FFF)
    return with_build_ids(read(dumps, "cores/crash-segv.core"), hide)


def escapes_core(dumps):
    """Module paths, the process name (pr_fname) and its arguments (pr_psargs) carry
    terminal escapes (OSC title, CSI clear), C1 CSI raw and in UTF-8, bidi override and
    isolates, and DEL: printed raw they rewrite the reader's terminal or line."""
    data = bytearray(renamed_files(read(dumps, "cores/crash-segv.core"), ESCAPE_NAMES))
    desc = next(core_notes(data, NT_PRPSINFO))
    data[desc + 40:desc + 56] = ESCAPE_FNAME.ljust(16, b"\0")[:15] + b"\0"
    data[desc + 56:desc + 136] = ESCAPE_PSARGS.ljust(80, b"\0")[:79] + b"\0"
    return bytes(data)


THREAD_LIST, MODULE_LIST, THREAD_NAME_LIST = 3, 4, 24


def minidump_string(text):
    """A MINIDUMP_STRING: byte length, UTF-16LE (lone surrogates kept), a NUL."""
    utf16 = text.encode("utf-16-le", "surrogatepass")
    return struct.pack("<I", len(utf16)) + utf16 + b"\0\0"


def escapes_dmp(dumps):
    """Module names and thread names (a ThreadNameList stream, or the existing one's
    strings repointed) carry ESC/BEL sequences, U+009B, U+202E, U+2066..U+2069, DEL
    and an unpaired surrogate."""
    data = bytearray(read(dumps, "windows/dumps/crash-av.dmp"))
    _, _, count, directory = struct.unpack_from("<IIII", data, 0)
    streams = [struct.unpack_from("<III", data, directory + 12 * i) for i in range(count)]
    rva_of = {t: rva for t, _, rva in streams}
    modules = rva_of[MODULE_LIST]
    for i in range(struct.unpack_from("<I", data, modules)[0]):
        name = minidump_string(DMP_MODULE_NAMES[i % len(DMP_MODULE_NAMES)])
        struct.pack_into("<I", data, modules + 4 + 108 * i + 20, append(data, name))
    threads = rva_of[THREAD_LIST]
    tids = [struct.unpack_from("<I", data, threads + 4 + 48 * i)[0]
            for i in range(struct.unpack_from("<I", data, threads)[0])]

    def thread_name(tid):
        return f"t{tid}-\x1b]0;PWNED-THREAD\x07\x1b[31mred\x1b[0m-\u202edaerht"
    if THREAD_NAME_LIST in rva_of:
        names = rva_of[THREAD_NAME_LIST]
        for i in range(struct.unpack_from("<I", data, names)[0]):
            at = names + 4 + 12 * i
            tid, = struct.unpack_from("<I", data, at)
            struct.pack_into("<Q", data, at + 4, append(data, minidump_string(thread_name(tid))))
    else:
        rvas = [append(data, minidump_string(thread_name(tid))) for tid in tids]
        stream = struct.pack("<I", len(tids))
        stream += b"".join(struct.pack("<IQ", tid, rva) for tid, rva in zip(tids, rvas))
        streams.append((THREAD_NAME_LIST, len(stream), append(data, stream)))
        table = b"".join(struct.pack("<III", *s) for s in streams)
        struct.pack_into("<II", data, 8, len(streams), append(data, table))
    return bytes(data)


# --- Issue 19: structures that claim far more than the dump holds ----------------------

JIT_ENTRY = struct.Struct("<QQQQ")   # jit_code_entry: next, prev, symfile_addr, symfile_size
JIT_ENTRIES_AT = 0x7E4000000000      # the crafted entry lists (the dumps map nothing there)
JIT_OBJECTS_AT = 0x7E5000000000      # crafted JIT object files
JIT_NOWHERE = 0x7E6000000000         # where claimed object files are not
JIT_CLAIMS, JIT_CLAIM_SIZE = 4096, 64 << 20
JIT_SHARED = 100
BOMB_SIZE = 1900 << 20               # each bomb's .debug_info, uncompressed: under 2 GiB
ELFCOMPRESS_ZSTD, SHF_ALLOC, SHF_EXECINSTR, SHF_COMPRESSED = 2, 0x2, 0x4, 0x800
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_DYNSYM = 1, 2, 3, 11
SHT_NULL, SHT_GNU_HASH = 0, 0x6FFFFFF6
SHDR = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
SYM = struct.Struct("<IBBHQQ")       # Elf64_Sym: name, info, other, shndx, value, size


def jit_entry_list(objects, at=JIT_ENTRIES_AT):
    """jit_code_entry records for (symfile_addr, symfile_size) pairs, linked in order,
    the first at `at`."""
    last = len(objects) - 1
    return b"".join(JIT_ENTRY.pack(at + JIT_ENTRY.size * (i + 1) if i < last else 0,
                                   at + JIT_ENTRY.size * (i - 1) if i else 0, symfile, size)
                    for i, (symfile, size) in enumerate(objects))


def jit_descriptor(core):
    """Where __jit_debug_descriptor is in the dumped memory: version 1, an action flag
    of 0-2, and a first_entry whose symfile_addr holds an ELF image."""
    for _, p_type, offset, vaddr, size in phdrs(core):
        if p_type != PT_LOAD:
            continue
        for m in re.finditer(rb"\x01\0\0\0[\0-\x02]\0\0\0", core[offset:offset + size]):
            if m.start() % 8 == 0 and registered_object(core, vaddr + m.start()):
                return vaddr + m.start()
    raise ValueError("no GDB JIT descriptor in the dump")


def registered_object(core, descriptor):
    """(symfile_addr, symfile_size) of the descriptor's first entry when that is an ELF
    image in the dump, else None."""
    first = dumped(core, descriptor + 16, 8)
    entry = first and dumped(core, struct.unpack("<Q", first)[0], JIT_ENTRY.size)
    if not entry:
        return None
    _, _, symfile, size = JIT_ENTRY.unpack(entry)
    return (symfile, size) if dumped(core, symfile, 4) == b"\x7fELF" else None


def auxv_value(core, key):
    """The value of an auxiliary vector entry (NT_AUXV)."""
    desc = next(core_notes(core, NT_AUXV))
    for at in range(desc, len(core) - 15, 16):
        k, value = struct.unpack_from("<QQ", core, at)
        if k in (key, 0):
            return value if k == key else None
    return None


Section = collections.namedtuple("Section", "name header type addr offset size link")


def elf_sections(image):
    """The Sections of an ELF64 image: name, header offset, and the header's fields."""
    shoff, = struct.unpack_from("<Q", image, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 58)
    fields = [SHDR.unpack_from(image, shoff + shentsize * i) for i in range(shnum)]
    names = fields[shstrndx][4]

    def name(f):
        end = bytes(image[names + f[0]:names + f[0] + 256]).index(b"\0")
        return bytes(image[names + f[0]:names + f[0] + end]).decode()
    return [Section(name(f), shoff + shentsize * i, f[1], f[3], f[4], f[5], f[6])
            for i, f in enumerate(fields)]


def expose_in_vdso(core, name, address):
    """The core with the vDSO's last dynamic symbol made `name`, an absolute object symbol
    at `address` once the vDSO's load bias is added: a reader that looks the name up in
    the modules' symbol tables finds it in the dump alone, without any file. The vDSO's
    .dynstr, with the name added, is copied into the zero slack at the end of its
    mapping, and its section header repointed there. Its GNU hash table, which hashes
    the symbol's old name, is made a null section: a reader that looks names up by
    hash, as the dynamic loader does, then scans the symbols as it does without one."""
    data = bytearray(core)
    base = auxv_value(data, AT_SYSINFO_EHDR)
    at, size = dumped_extent(data, base)
    image = memoryview(data)[at:at + size]
    sections = elf_sections(image)
    dynsym = next(s for s in sections if s.type == SHT_DYNSYM)
    dynstr = sections[dynsym.link]
    table = bytes(image[dynstr.offset:dynstr.offset + dynstr.size]) + name.encode() + b"\0"
    slack = (size - len(table)) & ~7
    assert not any(image[slack:]), "no zero slack at the end of the vDSO for its new .dynstr"
    image[slack:slack + len(table)] = table
    # sh_addr, sh_offset, sh_size
    struct.pack_into("<QQQ", image, dynstr.header + 16, slack, slack, len(table))
    for section in sections:
        if section.type == SHT_GNU_HASH:
            struct.pack_into("<I", image, section.header + 4, SHT_NULL)  # sh_type
    preferred = min(vaddr for _, t, _, vaddr, _ in phdrs(image) if t == PT_LOAD) & ~(PAGE - 1)
    value = (address - base + preferred) % (1 << 64)
    SYM.pack_into(image, dynsym.offset + dynsym.size - SYM.size, dynstr.size,
                  0x11, 0, 0xFFF1, value, 24)  # STB_GLOBAL|STT_OBJECT, SHN_ABS
    image.release()
    return bytes(data)


def jit_core(core, objects, blobs=b""):
    """The JIT core with its GDB JIT descriptor's entry list replaced: first_entry (and
    relevant_entry) point at entries for `objects` (symfile_addr, symfile_size) in a new
    PT_LOAD at JIT_ENTRIES_AT; `blobs` are mapped at JIT_OBJECTS_AT. The vDSO's symbol
    table names the descriptor too, so that it is found without the executable's file."""
    descriptor = jit_descriptor(core)
    segments = [(JIT_ENTRIES_AT, jit_entry_list(objects))]
    segments += [(JIT_OBJECTS_AT, blobs)] if blobs else []
    exposed = expose_in_vdso(core, "__jit_debug_descriptor", descriptor)
    data = bytearray(with_loads(exposed, segments))
    entries = memory_at(data, descriptor, 24) + 8  # relevant_entry, first_entry
    struct.pack_into("<QQ", data, entries, JIT_ENTRIES_AT, JIT_ENTRIES_AT)
    return bytes(data)


def jit_claims(dumps):
    """A GDB JIT entry list of 4,096 entries, 4,095 of them claiming a 64 MiB object file:
    at addresses the dump has no memory for (even entries) or where it has only the rest
    of the entry list, no ELF (odd ones). A reader that allocates what an entry claims
    before reading uses 4,095 x 64 MiB. The last entry is the program's real one."""
    core = read(dumps, "cores/jit-gdb.core")

    def claimed_at(i):
        if i % 2:
            return JIT_ENTRIES_AT + JIT_ENTRY.size * i
        return JIT_NOWHERE + i * JIT_CLAIM_SIZE
    claims = [(claimed_at(i), JIT_CLAIM_SIZE) for i in range(JIT_CLAIMS - 1)]
    return jit_core(core, claims + [registered_object(core, jit_descriptor(core))])


def jit_shared(dumps):
    """100 GDB JIT entries that all name the one real object file in the dump, with its
    true size: it must be read (and its DWARF parsed) once, not 100 times."""
    core = read(dumps, "cores/jit-gdb.core")
    return jit_core(core, [registered_object(core, jit_descriptor(core))] * JIT_SHARED)


def zstd_zeros(size):
    """A zstd frame of `size` zero bytes: its content size in the header, then raw-run
    (RLE) blocks of 128 KiB, 4 bytes each, so 1,900 MiB takes 60 KB."""
    block = 128 << 10
    sizes = [block] * (size // block) + ([size % block] if size % block else [])
    frame = struct.pack("<IBQ", 0xFD2FB528, 0xE0, size)  # magic; single segment, 8-byte size
    for i, n in enumerate(sizes):
        header = (i == len(sizes) - 1) | 1 << 1 | n << 3  # last block, RLE, size
        frame += struct.pack("<I", header)[:3] + b"\0"
    return frame


def elf_object(sections, symbols):
    """A small ELF64 x86-64 relocatable object: `sections` (name, flags, addr, bytes) as
    PROGBITS, then .symtab with global FUNC `symbols` (name, section number, offset in
    that section, size), .strtab and .shstrtab."""
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n, *_ in symbols)
    symtab = bytes(SYM.size) + b"".join(
        SYM.pack(strtab.index(n.encode() + b"\0", 1), 0x12, 0, index, value, size)  # GLOBAL FUNC
        for n, index, value, size in symbols)
    names = [n for n, *_ in sections] + [".symtab", ".strtab", ".shstrtab"]
    shstrtab = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    link = len(sections) + 2  # .strtab's number
    table = [(SHT_PROGBITS, flags, addr, blob, 0, 0, 1, 0) for _, flags, addr, blob in sections]
    table += [(SHT_SYMTAB, 0, 0, symtab, link, 1, 8, SYM.size),
              (SHT_STRTAB, 0, 0, strtab, 0, 0, 1, 0), (SHT_STRTAB, 0, 0, shstrtab, 0, 0, 1, 0)]
    data = bytearray(64)
    headers = bytes(SHDR.size)
    for name, (sh_type, flags, addr, blob, sh_link, info, align, entsize) in zip(names, table):
        offset = append(data, blob)
        headers += SHDR.pack(shstrtab.index(name.encode() + b"\0"), sh_type, flags, addr, offset,
                             len(blob), sh_link, info, align, entsize)
    shoff = append(data, headers)
    data[:64] = (b"\x7fELF\x02\x01\x01" + bytes(9)
                 + struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, shoff, 0, 64, 0, 0,
                               SHDR.size, len(names) + 1, len(names)))
    return bytes(data)


def bomb_object(core, function, eh_frame):
    """A plausible JIT object for one of the real JIT's functions (name, address, size):
    .text at its address (its code), a copy of the real .eh_frame (address, bytes) so
    unwinding goes on, a symbol bomb_<name>, and a zstd-compressed .debug_info whose
    Elf64_Chdr claims, truthfully, BOMB_SIZE bytes of zeros."""
    name, address, size = function
    debug_info = struct.pack("<IIQQ", ELFCOMPRESS_ZSTD, 0, BOMB_SIZE, 1) + zstd_zeros(BOMB_SIZE)
    return elf_object([(".text", SHF_ALLOC | SHF_EXECINSTR, address, dumped(core, address, size)),
                       (".eh_frame", SHF_ALLOC, eh_frame[0], eh_frame[1]),
                       (".debug_info", SHF_COMPRESSED, 0, debug_info)],
                      [("bomb_" + name, 1, 0, size)])


def elf_functions(image):
    """(name, value, size) of the FUNC symbols in an ELF64 image's .symtab."""
    sections = elf_sections(image)
    symtab = next(s for s in sections if s.type == SHT_SYMTAB)
    strings = sections[symtab.link].offset
    found = []
    for at in range(symtab.offset + SYM.size, symtab.offset + symtab.size, SYM.size):
        name, info, _, _, value, size = SYM.unpack_from(image, at)
        if info & 0xF == 2:  # STT_FUNC
            end = image.index(b"\0", strings + name)
            found.append((image[strings + name:end].decode(), value, size))
    return sorted(found, key=lambda f: f[1])


def jit_zstd_bomb(dumps):
    """Three GDB JIT objects (one per real JIT function, whose frames they then hold),
    each with a SHF_COMPRESSED (ELFCOMPRESS_ZSTD) .debug_info of 60 KB that decompresses
    to 1,900 MiB of zeros: under the default --max-debug-bytes each, 5.6 GiB together.
    The real object is the list's last entry."""
    core = read(dumps, "cores/jit-gdb.core")
    real = registered_object(core, jit_descriptor(core))
    image = dumped(core, *real)
    eh_frame = next(s for s in elf_sections(image) if s.name == ".eh_frame")
    eh_frame = (eh_frame.addr, image[eh_frame.offset:eh_frame.offset + eh_frame.size])
    blobs, objects = bytearray(), []
    for function in elf_functions(image):
        bomb = bomb_object(core, function, eh_frame)
        objects.append((JIT_OBJECTS_AT + append(blobs, bomb), len(bomb)))
    return jit_core(core, objects + [real], bytes(blobs))


VDSO_BOMB_AT = 0x7E6000000000  # the crafted vDSO (the dumps map nothing there)


def vdso_zstd_bomb(dumps):
    """The crash core whose vDSO (AT_SYSINFO_EHDR, repointed to a new segment) is an ELF
    object with a SHF_COMPRESSED (ELFCOMPRESS_ZSTD) .debug_info of 60 KB that decompresses
    to 1,900 MiB of zeros: no module file is needed to reach it."""
    debug_info = struct.pack("<IIQQ", ELFCOMPRESS_ZSTD, 0, BOMB_SIZE, 1) + zstd_zeros(BOMB_SIZE)
    vdso = elf_object([(".text", SHF_ALLOC | SHF_EXECINSTR, 0, b"\xc3"), (".debug_info", SHF_COMPRESSED, 0, debug_info)],
                      [("__vdso_bomb", 1, 0, 1)])
    data = bytearray(with_loads(read(dumps, "cores/crash-segv.core"), [(VDSO_BOMB_AT, vdso)]))
    desc = next(core_notes(data, NT_AUXV))
    at = next(at for at in range(desc, len(data) - 15, 16) if struct.unpack_from("<Q", data, at)[0] == AT_SYSINFO_EHDR)
    struct.pack_into("<Q", data, at + 8, VDSO_BOMB_AT)
    return bytes(data)


RANGES, RANGES_AT = 200_000, 0x100000000000


def many_ranges(dumps):
    """The crash core with 200,000 more PT_LOAD segments of one byte each, one per page
    from RANGES_AT where nothing was mapped (all share one byte of the file): e_phnum is
    PN_XNUM and the count is in section header 0. The original segments come first, so
    the walk still has its memory."""
    data = bytearray(read(dumps, "cores/crash-segv.core"))
    byte = append(data, b"\xcc")
    extra = b"".join(PHDR.pack(PT_LOAD, PF_R, byte, RANGES_AT + i * PAGE, 0, 1, 1, 1)
                     for i in range(RANGES))
    return with_program_headers(bytes(data), extra)


DMP_RANGES = 1_000_000


def many_ranges_dmp(dumps):
    """The Windows crash dump with 1,000,000 more one-byte memory ranges, one per page
    from RANGES_AT (all share one byte of the file): a reader that walks its ranges for
    every read of memory takes minutes."""
    data = bytearray(read(dumps, "windows/dumps/crash-av.dmp"))
    byte = append(data, b"\xcc")
    with_list(data, MEMORY_LIST, 16, b"".join(struct.pack("<QII", RANGES_AT + i * PAGE, 1, byte)
                                              for i in range(DMP_RANGES)))
    return bytes(data)


THREADS, FIRST_PID = 100_000, 1_000_000


def with_thread_copies(core):
    """CORE with THREADS more NT_PRSTATUS notes after its own, copies of its first thread's
    with pr_pid FIRST_PID, FIRST_PID + 1, ..."""
    def rewrite(data, found):
        start, desc, _, _, end = next(n for n in found if n[3] == NT_PRSTATUS)
        note = bytearray(data[start:end])
        copies = []
        for i in range(THREADS):
            struct.pack_into("<I", note, desc - start + 32, FIRST_PID + i)  # pr_pid
            copies.append(bytes(note))
        return b"".join(bytes(data[s:e]) for s, _, _, _, e in found) + b"".join(copies)
    return with_notes(core, rewrite)


def many_threads(dumps):
    """The crash core with 100,000 copies of its crashing thread: 100,003 threads, 100,000 of
    them on one stack (--max-threads' default is 100,000)."""
    return with_thread_copies(read(dumps, "cores/crash-segv.core"))


def deep_threads(dumps):
    """The recursion core with 100,000 copies of its deep thread (308 frames with the
    program's files, 3 without): 30.8 million frames to print."""
    return with_thread_copies(read(dumps, "cores/recursion-alloca.core"))


SLASHES = 2000


def slash_modules(dumps):
    """The crash core's NT_FILE note with 2,000 more mappings, named /proc/self/exe with
    1 to 2,000 leading slashes (2 MB of names): each a module whose path a reader
    normalises and may look up (the reader's own executable) 2,000 times."""
    core = read(dumps, "cores/crash-segv.core")
    slashed = [b"/" * n + b"proc/self/exe" for n in range(1, SLASHES + 1)]
    return renamed_files(core, file_names(core) + slashed)


MEMORY_LIST = 5
MODULE = struct.Struct("<QIIII52sIIIIQQ")  # MINIDUMP_MODULE (108 bytes)
PE_MODULES, PE_CLAIM, PE_BASE = 20, 256 << 20, 0x600000000000
PE_HEADERS = 0x400


def pe_headers(base, sections):
    """PE32+ headers (PE_HEADERS bytes) of an x64 DLL at `base`, SizeOfImage PE_CLAIM, with
    `sections` (name, rva, VirtualSize, PointerToRawData, SizeOfRawData)."""
    coff = struct.pack("<4sHHIIIHH", b"PE\0\0", 0x8664, len(sections), 0, 0, 0, 240, 0x2022)
    optional = struct.pack("<HBBIIIIIQIIHHHHHHIIIIHHQQQQII", 0x20B, 14, 0, 0, 0, 0, 0, 0x1000, base,
                           0x1000, 0x200, 6, 0, 0, 0, 6, 0, 0, PE_CLAIM, PE_HEADERS, 0, 3, 0x160,
                           0x100000, 0x1000, 0x100000, 0x1000, 0, 16) + bytes(16 * 8)
    table = b"".join(struct.pack("<8sIIIIIIHHI", name, size, rva, raw_size, raw, 0, 0, 0, 0,
                                 0x40000040)  # initialized data, readable
                     for name, rva, size, raw, raw_size in sections)
    dos = b"MZ" + bytes(0x3A) + struct.pack("<I", 0x40)
    return (dos + coff + optional + table).ljust(PE_HEADERS, b"\0")


def claiming_module(i):
    """(base, memory ranges (address, bytes)) of crafted module i, whose headers claim a
    256 MiB image by one of three tricks, by i % 3: a section whose raw data (256 MiB)
    was never mapped (VirtualSize 0x100); two small sections whose raw data lie 256 MiB
    apart; a 256 MiB section of which only the first and last 16 bytes are in the dump."""
    base = PE_BASE + i * (1 << 32)
    big = PE_CLAIM - 0x1000
    if i % 3 == 0:
        headers = pe_headers(base, [(b".text", 0x1000, 0x100, 0x1000, big)])
        return base, [(base, headers.ljust(0x1000, b"\0") + b"\xcc" * 0x100)]
    if i % 3 == 1:
        headers = pe_headers(base, [(b".text", 0x1000, 0x200, PE_HEADERS, 0x200),
                                    (b".data", 0x2000, 0x200, PE_CLAIM - 0x200, 0x200)])
        return base, [(base, headers.ljust(0x2200, b"\xcc"))]
    headers = pe_headers(base, [(b".text", 0x1000, big, 0x1000, big)])
    return base, [(base, headers.ljust(0x1010, b"\xcc")), (base + PE_CLAIM - 16, b"\xcc" * 16)]


def stream(data, stream_type):
    """The directory entry offset, size and RVA of a minidump stream."""
    _, _, count, directory = struct.unpack_from("<IIII", data, 0)
    for at in range(directory, directory + 12 * count, 12):
        found, size, rva = struct.unpack_from("<III", data, at)
        if found == stream_type:
            return at, size, rva
    raise ValueError(f"no stream {stream_type}")


def with_list(data, stream_type, entry_size, entries):
    """Rebuild a minidump list stream (a u32 count, then entries) with `entries` (bytes)
    added, appended and repointed; the old entries keep their RVAs."""
    at, _, rva = stream(data, stream_type)
    count, = struct.unpack_from("<I", data, rva)
    blob = struct.pack("<I", count + len(entries) // entry_size)
    blob += data[rva + 4:rva + 4 + entry_size * count] + entries
    struct.pack_into("<II", data, at + 4, len(blob), append(data, blob))


def pe_claims(dumps):
    """Twenty more modules (big0.dll ... big19.dll) without files, whose PE headers in
    the dump's memory claim 256 MiB images (claiming_module's three tricks): a reader
    that rebuilds images from memory allocates, or keeps, 256 MiB for each."""
    data = bytearray(read(dumps, "windows/dumps/crash-av.dmp"))
    modules, ranges = b"", b""
    for i in range(PE_MODULES):
        base, memory = claiming_module(i)
        name = append(data, minidump_string(f"big{i}.dll"))
        modules += MODULE.pack(base, PE_CLAIM, 0, 0, name, bytes(52), 0, 0, 0, 0, 0, 0)
        for address, blob in memory:
            ranges += struct.pack("<QII", address, len(blob), append(data, blob))
    with_list(data, MODULE_LIST, MODULE.size, modules)
    with_list(data, MEMORY_LIST, 16, ranges)
    return bytes(data)


ELF_MODULES, ELF_CLAIM, ELF_BASE = 24, 255 << 20, 0x7E7000000000
EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
PT_DYNAMIC = 2
PF_X = 1


def claiming_elf(i, base):
    """The memory ranges (address, bytes) of crafted ELF module i at `base`, whose program
    headers claim a 255 MiB image by one of three tricks, by i % 3: a segment of which only
    the headers' page is in the dump; two small segments whose file bytes lie 255 MiB apart;
    a 255 MiB segment of which only the first and last pages are in the dump. Each has a
    dynamic section (an empty one) in its first page, as a loaded image needs to be read."""
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    loads = {0: [(0, 0, ELF_CLAIM)], 1: [(0, 0, PAGE), (ELF_CLAIM, 0x10000, PAGE)], 2: [(0, 0, ELF_CLAIM)]}[i % 3]
    headers = [PHDR.pack(PT_LOAD, PF_R | PF_X, offset, vaddr, vaddr, size, size, PAGE) for offset, vaddr, size in loads]
    headers.append(PHDR.pack(PT_DYNAMIC, PF_R, 0x800, 0x800, 0x800, 16, 16, 8))
    header = EHDR.pack(ident, 3, 0x3E, 1, 0, 64, 0, 0, 64, PHDR.size, len(headers), 64, 0, 0)
    page = (header + b"".join(headers)).ljust(PAGE, b"\0")  # the dynamic section at 0x800: DT_NULL
    memory = [(base, page)]
    if i % 3 == 2:
        memory.append((base + ELF_CLAIM - PAGE, b"\xcc" * PAGE))
    return memory


def elf_claims(dumps):
    """The crash core with 24 more modules (big0.so ... big23.so) without files, whose ELF
    headers in the dump's memory claim 255 MiB images (claiming_elf's three tricks): a
    reader that rebuilds images from a full core's memory allocates, or keeps, 255 MiB for
    each."""
    core = read(dumps, "cores/crash-segv.core")
    names = [f"big{i}.so".encode() for i in range(ELF_MODULES)]
    core = renamed_files(core, file_names(core) + names, extra_base=ELF_BASE)
    # renamed_files maps module i's one page at extra_base + i * 0x10000.
    return with_loads(core, [r for i in range(ELF_MODULES) for r in claiming_elf(i, ELF_BASE + i * 0x10000)])


def read(dumps, relative):
    with open(os.path.join(dumps, relative), "rb") as f:
        return f.read()


CRAFTED = {
    "host-paths.core": host_paths,
    "fake-buildid.core": fake_buildid,
    "no-buildid.core": no_buildid,
    "escapes.core": escapes_core,
    "escapes.dmp": escapes_dmp,
    "escapes-dotnet.core": escapes_dotnet,
    "jit-claims.core": jit_claims,
    "jit-shared.core": jit_shared,
    "jit-zstd-bomb.core": jit_zstd_bomb,
    "vdso-zstd-bomb.core": vdso_zstd_bomb,
    "many-ranges.core": many_ranges,
    "many-ranges.dmp": many_ranges_dmp,
    "many-threads.core": many_threads,
    "deep-threads.core": deep_threads,
    "slash-modules.core": slash_modules,
    "pe-claims.dmp": pe_claims,
    "elf-claims.core": elf_claims,
}


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--traps"):
        sys.exit(__doc__)
    dumps, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    crafted = dict(CRAFTED)
    if len(argv) == 5:
        crafted["traps.core"] = lambda d: traps(d, os.path.abspath(argv[4]))
    for name, craft in crafted.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(craft(dumps))


if __name__ == "__main__":
    main(sys.argv)
