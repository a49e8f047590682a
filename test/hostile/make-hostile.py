#!/usr/bin/env python3
"""Craft hostile dumps from the project's test dumps: recorded module paths that point at
host files, forged or missing module identities, and names full of terminal control and
format characters. Deterministic: the same inputs give the same bytes.

Usage: make-hostile.py DUMPS_DIR OUT_DIR [--traps TRAP_DIR]
  DUMPS_DIR  the unpacked test dumps (cores/crash-segv.core, windows/dumps/crash-av.dmp,
             dotnet/cores/crash-normal.core)
  OUT_DIR    where host-paths.core, fake-buildid.core, no-buildid.core, escapes.core,
             escapes.dmp and escapes-dotnet.core are written
  TRAP_DIR   also traps.core, whose module paths lie in TRAP_DIR
"""
import os
import re
import struct
import sys

PT_LOAD, PT_NOTE = 1, 4
NT_PRPSINFO, NT_FILE = 3, 0x46494C45
NT_GNU_BUILD_ID = 3

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


def phdrs(data):
    """(header offset, p_type, p_offset, p_vaddr, p_filesz) of every program header."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        at = phoff + phentsize * i
        p_type, _, offset, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, at)
        yield at, p_type, offset, vaddr, filesz


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


def renamed_files(core, new_names, extra_base=0x10000000):
    """The core with its NT_FILE note rebuilt: the distinct recorded files take the new
    names in turn (every entry of one file the same name, start/end/offset kept). Names
    left over get a one-page mapping each at an address the core has no memory for, so
    that every name becomes a module whose file a reader looks up. The note grows, so
    the rebuilt PT_NOTE segment is appended at the end of the file and its program
    header repointed; the old segment's bytes stay where they were, unreferenced."""
    data = bytearray(core)
    for at, p_type, offset, _, size in list(phdrs(data)):
        if p_type != PT_NOTE:
            continue
        segment = bytearray()
        for start, desc, descsz, note_type, end in notes(data, offset, size):
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
        data += bytes(-len(data) % 8)
        struct.pack_into("<Q", data, at + 8, len(data))      # p_offset
        struct.pack_into("<QQ", data, at + 32, len(segment), 0)  # p_filesz, p_memsz
        data += segment
    return bytes(data)


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


def append(data, blob):
    """Append blob at an 8-aligned offset; return that offset (an RVA)."""
    data += bytes(-len(data) % 8)
    rva = len(data)
    data += blob
    return rva


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
