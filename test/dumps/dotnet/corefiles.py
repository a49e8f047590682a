#!/usr/bin/env python3
"""corefiles.py CORE: which files an ELF core's NT_FILE note maps and how much of each the
core's PT_LOAD segments hold (createdump writes a PT_LOAD only for memory it saved, so a
module's pages that are not in the dump have no segment at all).
Prints JSON: [{path, start, end, file_offset, bytes_in_core}] per mapping. Library use:
read_core(path) -> (loads, files). Python 3 standard library only."""
import json
import struct
import sys


def read_core(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit LE ELF"
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    loads, notes = [], []
    for i in range(e_phnum):
        p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align = \
            struct.unpack_from("<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_memsz, p_filesz, p_flags))
        elif p_type == 4:
            notes.append((p_offset, p_filesz))
    files = []
    for off, size in notes:
        pos, end = off, off + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            dpos = pos + 12 + ((namesz + 3) & ~3)
            desc = data[dpos:dpos + descsz]
            pos = dpos + ((descsz + 3) & ~3)
            if ntype == 0x46494c45 and name.startswith(b"CORE"):  # NT_FILE
                count, page = struct.unpack_from("<QQ", desc, 0)
                ents = [struct.unpack_from("<QQQ", desc, 16 + 24 * k) for k in range(count)]
                names = desc[16 + 24 * count:].split(b"\0")
                for (s, e, pg), n in zip(ents, names):
                    files.append({"path": n.decode(), "start": s, "end": e, "file_offset": pg * page})
    return loads, files


def covered(loads, start, end):
    n = 0
    for va, memsz, filesz, _ in loads:
        lo, hi = max(start, va), min(end, va + filesz)
        if hi > lo:
            n += hi - lo
    return n


def main():
    loads, files = read_core(sys.argv[1])
    for f in files:
        f["bytes_in_core"] = covered(loads, f["start"], f["end"])
    json.dump(files, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
