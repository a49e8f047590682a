"""Synthetic one-thread minidumps, as the tests for dumps this machine cannot make write them
(Windows ARM64, Windows on ARM, macOS arm64): a thread's CONTEXT and stack, modules without
CodeView records, more memory ranges, and a system info stream."""
import struct

THREAD_LIST, MODULE_LIST, MEMORY_LIST, SYSTEM_INFO = 3, 4, 5, 7


class Writer:
    def __init__(self):
        self.data = bytearray(32)  # the header, written last

    def put(self, blob):
        while len(self.data) % 8:
            self.data.append(0)
        rva = len(self.data)
        self.data += blob
        return rva


CSD_VERSION_RVA = 24  # in MINIDUMP_SYSTEM_INFO: where its service-pack string is, set by one_thread


def system_info(arch, platform, version, cpus=1):
    """MINIDUMP_SYSTEM_INFO: processor architecture, platform id, (major, minor, build)."""
    major, minor, build = version
    return struct.pack("<HHHBBIIIIIHH", arch, 0, 0, cpus, 1, major, minor, build, platform, 0, 0, 0) + bytes(24)


def one_thread(tid, context, sp, stack, modules, system, memory=(), timestamp=0):
    """The dump's bytes: thread `tid` with `context` and `stack` at `sp`; `modules` as
    (name, base, size, TimeDateStamp); `memory` as more (address, bytes) ranges."""
    w = Writer()
    ctx = w.put(bytes(context))
    stack_rva = w.put(stack)
    threads = w.put(struct.pack("<I", 1) + struct.pack("<IIIIQQIIII", tid, 0, 0, 0, 0, sp, len(stack), stack_rva,
                                                       len(context), ctx))
    records = b""
    for name, base, size, stamp in modules:
        name_rva = w.put(struct.pack("<I", 2 * len(name)) + name.encode("utf-16-le"))
        records += struct.pack("<QIIII", base, size, 0, stamp, name_rva) + bytes(52) + bytes(16) + bytes(16)
    module_list = w.put(struct.pack("<I", len(modules)) + records)
    ranges = [(sp, len(stack), stack_rva)] + [(address, len(data), w.put(data)) for address, data in memory]
    memory_list = w.put(struct.pack("<I", len(ranges)) + b"".join(struct.pack("<QII", *r) for r in ranges))
    system = bytearray(system)
    struct.pack_into("<I", system, CSD_VERSION_RVA, w.put(struct.pack("<I", 0)))  # an empty string
    system_rva = w.put(bytes(system))
    streams = [(THREAD_LIST, threads, 4 + 48), (MODULE_LIST, module_list, 4 + 108 * len(modules)),
               (MEMORY_LIST, memory_list, 4 + 16 * len(ranges)), (SYSTEM_INFO, system_rva, len(system))]
    directory = w.put(b"".join(struct.pack("<III", kind, size, rva) for kind, rva, size in streams))
    struct.pack_into("<IIIIIIQ", w.data, 0, 0x504D444D, 0xA793, len(streams), directory, 0, timestamp, 0)
    return bytes(w.data)
