#!/usr/bin/env python3
"""unwind-coverage.py [DIR]: which Win64 unwind codes the captured stacks exercise.

For every physical frame of every oracle (DIR/oracle/*.winedbg.json, DIR defaults to this
script's folder), finds the function's RUNTIME_FUNCTION in the module's .pdata (the program
from DIR/bin/NAME.exe.xz, a Wine DLL from DIR/system32/NAME.dll.xz, at the base the dump's
module list records, from DIR/dumps.json) and decodes its UNWIND_INFO, following chained
entries. Prints, per UWOP code and flag, how many distinct functions on the stacks use it and
a few of their names, then the frames whose pc has no RUNTIME_FUNCTION (leaves).
Python 3 standard library only.
"""
import json, lzma, os, struct, sys
from collections import defaultdict

UWOP = {0: "UWOP_PUSH_NONVOL", 1: "UWOP_ALLOC_LARGE", 2: "UWOP_ALLOC_SMALL", 3: "UWOP_SET_FPREG",
        4: "UWOP_SAVE_NONVOL", 5: "UWOP_SAVE_NONVOL_FAR", 6: "UWOP_EPILOG", 7: "UWOP_SPARE_CODE",
        8: "UWOP_SAVE_XMM128", 9: "UWOP_SAVE_XMM128_FAR", 10: "UWOP_PUSH_MACHFRAME"}
SLOTS = {0: 1, 1: None, 2: 1, 3: 1, 4: 2, 5: 3, 6: 2, 7: 3, 8: 2, 9: 3, 10: 1}


class PE:
    def __init__(self, data):
        self.d = d = data
        pe = struct.unpack_from("<I", d, 0x3C)[0]
        nsect, opt_size = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
        opt = pe + 24
        self.image_base = struct.unpack_from("<Q", d, opt + 24)[0]
        self.sects = [struct.unpack_from("<IIII", d, opt + opt_size + 40 * i + 8) for i in range(nsect)]
        pdata_rva, pdata_size = struct.unpack_from("<II", d, opt + 112 + 8 * 3)
        o = self.off(pdata_rva) if pdata_rva else 0
        self.funcs = [struct.unpack_from("<III", d, o + 12 * i) for i in range(pdata_size // 12)]
        self.funcs.sort()

    def off(self, rva):
        for vsize, va, rawsize, raw in self.sects:
            if va <= rva < va + max(vsize, rawsize):
                return raw + rva - va
        raise ValueError("rva %#x not in a section" % rva)

    def lookup(self, rva):
        lo, hi = 0, len(self.funcs)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.funcs[mid][1] <= rva:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.funcs) and self.funcs[lo][0] <= rva < self.funcs[lo][1]:
            return self.funcs[lo]
        return None

    def unwind(self, rf, depth=0):
        """[(code name, ...)], flags, frame register of RUNTIME_FUNCTION rf and its chain."""
        o = self.off(rf[2])
        vf, prolog, count, frame = struct.unpack_from("<BBBB", self.d, o)
        flags = vf >> 3
        ops, i = [], 0
        while i < count:
            off, opinfo = struct.unpack_from("<BB", self.d, o + 4 + 2 * i)
            op, info = opinfo & 15, opinfo >> 4
            name = UWOP.get(op, "UWOP_%d" % op)
            if op == 1:
                name += " (16-bit size)" if info == 0 else " (32-bit size)"
                n = 2 if info == 0 else 3
            else:
                n = SLOTS.get(op, 1)
            if op == 3:
                name += " (frame register %d, offset %#x)" % (frame & 15, (frame >> 4) * 16)
            ops.append(name)
            i += n
        names = ["UNW_FLAG_EHANDLER"] if flags & 1 else []
        names += ["UNW_FLAG_UHANDLER"] if flags & 2 else []
        if flags & 4 and depth < 32:
            chained = struct.unpack_from("<III", self.d, o + 4 + 2 * ((count + 1) & ~1))
            names.append("UNW_FLAG_CHAININFO")
            ops2, names2 = self.unwind(chained, depth + 1)
            ops += ops2
            names += names2
        if count == 0 and not flags:
            names.append("no unwind codes")
        return ops, names


def main(argv):
    here = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    manifest = json.load(open(os.path.join(here, "dumps.json")))
    pes = {}
    def pe_for(mod):
        if mod not in pes:
            for sub, ext in (("bin", ".exe"), ("system32", ".dll")):
                for f in os.listdir(os.path.join(here, sub)):
                    if f.lower() == (mod + ext + ".xz").lower():
                        pes[mod] = PE(lzma.open(os.path.join(here, sub, f)).read())
            pes.setdefault(mod, None)
        return pes[mod]
    uses = defaultdict(set)
    leaves = set()
    for dump in manifest["dumps"]:
        bases = {}
        for m in dump["modules"]:
            short = m["name"].replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
            bases[short] = int(m["base"], 16)
        oracle = json.load(open(os.path.join(here, dump["oracle"])))
        for t in oracle["threads"]:
            for i, f in enumerate(t["frames"]):
                if f["inlined"]:
                    continue
                mod = f["module"].lower()
                pe = pe_for(mod)
                if pe is None or mod not in bases:
                    continue
                pc = int(f["pc"], 16)
                rva = pc - bases[mod] - (1 if i > 0 else 0)      # callers: the call instruction
                rf = pe.lookup(rva)
                label = "%s!%s" % (mod, f["function"] or "%#x" % (rva + bases[mod] - bases[mod]))
                if rf is None:
                    leaves.add("%s (%s, thread %d frame %d)" % (label, dump["name"], t["tid"], i))
                    continue
                ops, flags = pe.unwind(rf)
                key = "%s!%#x" % (mod, rf[0])
                for op in set(ops) | set(flags):
                    uses[op].add((key, label))
    for op in sorted(uses):
        funcs = sorted({l for _, l in uses[op]})
        print("%-58s %3d functions: %s%s" % (op, len(uses[op]), ", ".join(funcs[:6]), ", ..." if len(funcs) > 6 else ""))
    for op in sorted(set(UWOP.values()) - {o.split(" (")[0] for o in uses}):
        print("%-58s   0 functions" % op)
    print("frames with no RUNTIME_FUNCTION (leaf, unwound by popping the return address):")
    for l in sorted(leaves):
        print("  " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
