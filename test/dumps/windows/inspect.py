#!/usr/bin/env python3
"""inspect.py DUMP.dmp [DUMP.dmp ...]: list what a Windows minidump holds.

Prints the header, the stream directory (type, size, RVA), the system info, the thread list
(tid, suspend count, TEB, context RVA/size and the context's ContextFlags/rip/rsp/rbp, stack
range and where its bytes are), the module list (base, size, TimeDateStamp, CheckSum, the
CodeView record's type: RSDS/NB10/BpEL/none, and the name), the memory list, the misc info,
and the exception stream if there is one (thread, code, flags, address, parameters, and the
exception context's rip/rsp). A dump may be damaged: every offset and count is checked
against the file size, and what cannot be read is reported and skipped.
Python 3 standard library only.
"""
import struct
import sys

STREAM_NAMES = {
    0: "Unused", 3: "ThreadList", 4: "ModuleList", 5: "MemoryList", 6: "Exception",
    7: "SystemInfo", 8: "ThreadExList", 9: "Memory64List", 10: "CommentA", 11: "CommentW",
    12: "HandleData", 13: "FunctionTable", 14: "UnloadedModuleList", 15: "MiscInfo",
    16: "MemoryInfoList", 17: "ThreadInfoList", 18: "HandleOperationList", 19: "Token",
    20: "JavaScriptData", 21: "SystemMemoryInfo", 22: "ProcessVmCounters", 23: "IptTrace",
    24: "ThreadNameList",
    0xFFF0: "Wine (0xFFF0)",
    0x47670001: "Breakpad LinuxCpuInfo?", 0x47670003: "Breakpad CpuInfo",
    0x47670007: "Breakpad LinuxEnviron?", 0x43500001: "CrashpadInfo",
}
ARCH = {0: "x86", 5: "ARM", 6: "IA64", 9: "AMD64", 12: "ARM64", 0xFFFF: "unknown"}
EXC_NAMES = {
    0xC0000005: "EXCEPTION_ACCESS_VIOLATION", 0x80000003: "EXCEPTION_BREAKPOINT",
    0x80000004: "EXCEPTION_SINGLE_STEP", 0xC0000094: "EXCEPTION_INT_DIVIDE_BY_ZERO",
    0xC00000FD: "EXCEPTION_STACK_OVERFLOW", 0xC000001D: "EXCEPTION_ILLEGAL_INSTRUCTION",
    0xE06D7363: "MSVC C++ exception", 0x20474343: "GCC C++ exception (STATUS_GCC_THROW)",
    0x21474343: "GCC unwind (STATUS_GCC_UNWIND)", 0x40010006: "DBG_PRINTEXCEPTION_C",
}


class Dump:
    def __init__(self, data):
        self.data = data
        self.problems = []

    def get(self, fmt, off):
        size = struct.calcsize(fmt)
        if off < 0 or off + size > len(self.data):
            raise ValueError("read of %d bytes at %#x is past the end (%#x)" % (size, off, len(self.data)))
        return struct.unpack_from(fmt, self.data, off)

    def string(self, rva):
        try:
            (n,) = self.get("<I", rva)
            if n > 0x10000 or rva + 4 + n > len(self.data):
                return "<bad string at %#x>" % rva
            return self.data[rva + 4:rva + 4 + n].decode("utf-16-le", "replace")
        except ValueError as e:
            return "<%s>" % e


def ctx_regs(d, rva, size):
    """ContextFlags, rip, rsp, rbp of an AMD64 CONTEXT (0x4d0 bytes or longer with XSTATE)."""
    if size < 0x100:
        return "context too small for AMD64 (%#x bytes)" % size
    try:
        (flags,) = d.get("<I", rva + 0x30)
        (rsp, rbp) = d.get("<QQ", rva + 0x98)
        (rip,) = d.get("<Q", rva + 0xF8)
    except ValueError as e:
        return "<%s>" % e
    return "flags=%#x rip=%#018x rsp=%#018x rbp=%#018x" % (flags, rip, rsp, rbp)


def inspect(path, out):
    data = open(path, "rb").read()
    d = Dump(data)
    w = out.write
    w("== %s (%d bytes)\n" % (path, len(data)))
    try:
        sig, ver, nstreams, dir_rva, checksum, stamp, flags = d.get("<IIIIIIQ", 0)
    except ValueError as e:
        w("  not a minidump: %s\n" % e)
        return 1
    if sig != 0x504D444D:
        w("  not a minidump: signature %#x\n" % sig)
        return 1
    w("header: version %#x (impl %#x), %d streams at %#x, TimeDateStamp %#x, Flags %#x\n"
      % (ver & 0xFFFF, ver >> 16, nstreams, dir_rva, stamp, flags))
    if nstreams > 4096:
        w("  too many streams (%d); reading the first 4096\n" % nstreams)
        nstreams = 4096
    streams = []
    w("streams:\n")
    for i in range(nstreams):
        try:
            st, size, rva = d.get("<III", dir_rva + 12 * i)
        except ValueError as e:
            w("  directory entry %d: %s\n" % (i, e))
            break
        bad = "" if rva + size <= len(data) else "  (PAST END OF FILE)"
        w("  %-22s type %#010x size %#8x rva %#8x%s\n" % (STREAM_NAMES.get(st, "?"), st, size, rva, bad))
        streams.append((st, size, rva))
    for st, size, rva in streams:
        try:
            if st == 7:
                system_info(d, rva, size, w)
            elif st == 15:
                misc_info(d, rva, size, w)
            elif st == 3:
                thread_list(d, rva, size, w)
            elif st == 4:
                module_list(d, rva, size, w)
            elif st == 5:
                memory_list(d, rva, size, w)
            elif st == 6:
                exception(d, rva, size, w)
            elif st == 24:
                thread_names(d, rva, size, w)
        except ValueError as e:
            w("  %s stream: %s\n" % (STREAM_NAMES.get(st, st), e))
    return 0


def system_info(d, rva, size, w):
    arch, level, rev, ncpu, ptype, major, minor, build, platform, csd_rva = d.get("<HHHBBIIIII", rva)
    w("system info: %s, %d CPUs, Windows %d.%d build %d, platform %d, product type %d, CSD %r\n"
      % (ARCH.get(arch, arch), ncpu, major, minor, build, platform, ptype, d.string(csd_rva) if csd_rva else ""))


def misc_info(d, rva, size, w):
    size_of_info, flags1, pid = d.get("<III", rva)
    w("misc info: SizeOfInfo %#x, Flags1 %#x, ProcessId %s\n" % (size_of_info, flags1, pid if flags1 & 1 else "(absent)"))


def thread_list(d, rva, size, w):
    (n,) = d.get("<I", rva)
    w("threads: %d\n" % n)
    if 4 + 48 * n > size:
        w("  stream too small for %d threads\n" % n)
        n = max(0, (size - 4) // 48)
    for i in range(n):
        off = rva + 4 + 48 * i
        tid, suspend, prio_class, prio, teb, stack_start, stack_size, stack_rva, ctx_size, ctx_rva = \
            d.get("<IIIIQQIIII", off)
        w("  tid %#06x (%5d) suspend %d teb %#x\n" % (tid, tid, suspend, teb))
        w("    context rva %#x size %#x: %s\n" % (ctx_rva, ctx_size, ctx_regs(d, ctx_rva, ctx_size)))
        w("    stack %#018x-%#018x (%#x bytes) at rva %#x\n"
          % (stack_start, stack_start + stack_size, stack_size, stack_rva))


def module_list(d, rva, size, w):
    (n,) = d.get("<I", rva)
    w("modules: %d\n" % n)
    if 4 + 108 * n > size:
        w("  stream too small for %d modules\n" % n)
        n = max(0, (size - 4) // 108)
    for i in range(n):
        off = rva + 4 + 108 * i
        base, msize, checksum, stamp, name_rva = d.get("<QIIII", off)
        cv_size, cv_rva = d.get("<II", off + 24 + 52)
        cv = "none"
        if cv_size >= 4:
            try:
                tag = d.data[cv_rva:cv_rva + 4]
                cv = tag.decode("ascii", "replace")
                if tag == b"RSDS" and cv_size >= 24:
                    g = d.data[cv_rva + 4:cv_rva + 20]
                    (age,) = d.get("<I", cv_rva + 20)
                    pdb = d.data[cv_rva + 24:cv_rva + cv_size].split(b"\0")[0].decode("utf-8", "replace")
                    cv = "RSDS %s age %d %s" % (g.hex(), age, pdb)
                elif tag == b"BpEL":
                    cv = "BpEL " + d.data[cv_rva + 4:cv_rva + cv_size].hex()
            except ValueError as e:
                cv = "<%s>" % e
        w("  %#018x %#9x stamp %#010x cksum %#010x cv %-5s %s\n"
          % (base, msize, stamp, checksum, cv, d.string(name_rva)))


def memory_list(d, rva, size, w):
    (n,) = d.get("<I", rva)
    total = 0
    ranges = []
    for i in range(min(n, max(0, (size - 4) // 16))):
        start, msize, mrva = d.get("<QII", rva + 4 + 16 * i)
        total += msize
        ranges.append((start, msize, mrva))
    w("memory list: %d ranges, %d bytes\n" % (n, total))
    for start, msize, mrva in ranges:
        w("    %#018x-%#018x %#8x bytes at rva %#x\n" % (start, start + msize, msize, mrva))


def exception(d, rva, size, w):
    tid, _align, code, flags, rec, addr, nparams = d.get("<IIIIQQI", rva)
    params = d.get("<15Q", rva + 40)[:min(nparams, 15)]
    ctx_size, ctx_rva = d.get("<II", rva + 160)
    w("exception: thread %#x (%d), code %#010x %s, flags %#x, address %#018x\n"
      % (tid, tid, code, EXC_NAMES.get(code, ""), flags, addr))
    w("    parameters: %s\n" % " ".join("%#x" % p for p in params))
    if code == 0xC0000005 and len(params) >= 2:
        w("    (%s at %#x)\n" % ({0: "read", 1: "write", 8: "execute"}.get(params[0], params[0]), params[1]))
    w("    context rva %#x size %#x: %s\n" % (ctx_rva, ctx_size, ctx_regs(d, ctx_rva, ctx_size)))


def thread_names(d, rva, size, w):
    (n,) = d.get("<I", rva)
    w("thread names: %d\n" % n)
    for i in range(min(n, max(0, (size - 4) // 12))):
        tid, name_rva = d.get("<IQ", rva + 4 + 12 * i)
        w("  tid %#x %r\n" % (tid, d.string(name_rva)))


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    rc = 0
    for path in argv[1:]:
        rc |= inspect(path, sys.stdout)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
