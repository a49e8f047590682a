#!/usr/bin/env python3
"""--symbol-cache changes no output (issue 20).

Usage: symbol_cache_test.py STACKWALK UNPACKED_DUMPS_DIR

The cache keeps three kinds of entries for native walks: decompressed debug
files (.inflated), each ELF image's symbol map (.symmap: the frames at every
address, and where tail calls can be), and the tail-call frames found
between two frames (.tailcalls). Every golden file's command run with
--symbol-cache: on an empty cache (the entries are made), on the warm cache
(read: a warm walk opens no DWARF), and after every entry was damaged (one
of each kind truncated, the others with a byte flipped: each must be made
again, not read); each output equal to the golden file. Then six walks at
once on an empty cache: the same output, the entries one walk makes, no
temporary file left.
"""
import concurrent.futures
import hashlib
import os
import tempfile

import dumps
import golden_test


KINDS = (".inflated", ".symmap", ".tailcalls")


def entries(cache, kinds=KINDS):
    return sorted(os.path.join(d, f) for kind in kinds
                  for d, _, files in os.walk(os.path.join(cache, kind)) for f in files)


def damage(path, truncate):
    """Truncated, or a byte flipped: in the middle, or for a symbol map in its
    chunk checksums (the map checks each 4 KiB chunk only when a lookup
    reads it, SymbolMapTest covers that; damaged checksums are found on open)."""
    with open(path, "r+b") as f:
        size = os.path.getsize(path)
        if truncate:
            f.truncate(size // 2)
        else:
            at = 56 if path.endswith(".map") else size // 2
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x55]))


def contents(paths):
    result = {}
    for path in paths:
        with open(path, "rb") as f:
            result[path] = hashlib.sha256(f.read()).hexdigest()
    return result


def walk_all(stackwalk, cases, cache, checks, label):
    differ = [file for file, directory, args in cases
              if dumps.run_stackwalk(stackwalk, directory, args + ["--symbol-cache", cache]).stdout
              != golden_test.golden(file)]
    checks(not differ, f"{label}: {len(cases)} outputs equal their golden files" + (f" (differ: {differ[:8]})" if differ else ""))


def main(stackwalk, unpacked, options):
    checks = dumps.Checks()
    cases = list(golden_test.cases(unpacked))
    with tempfile.TemporaryDirectory(prefix="stackwalk-cache-") as work:
        cache = os.path.join(work, "cache")
        walk_all(stackwalk, cases, cache, checks, "empty cache")
        made = entries(cache)
        for kind, least in ((".inflated", "libc's"), (".symmap", "libc's and the programs'"),
                            (".tailcalls", "the test programs' calls into libc's pthread_join")):
            count = len(entries(cache, [kind]))
            checks(count >= 1, f"{count} {kind} entries in the cache ({least} at least)")
        before = contents(made)
        walk_all(stackwalk, cases, cache, checks, "warm cache")
        checks(entries(cache) == made, "the warm walks made no entry")
        for kind in KINDS:
            for index, path in enumerate(entries(cache, [kind])):
                damage(path, truncate=index == 0)
        walk_all(stackwalk, cases, cache, checks, "damaged entries")
        checks(contents(entries(cache)) == before, "each damaged entry was made again, byte for byte")

        # Walks at once: each writes its own temporary file and renames it.
        shared = os.path.join(work, "shared")
        file, directory, args = next(c for c in cases if c[0] == "threads-O2-nofp.txt")
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            outputs = list(pool.map(lambda _: dumps.run_stackwalk(
                stackwalk, directory, args + ["--symbol-cache", shared]).stdout, range(6)))
        checks(all(out == golden_test.golden(file) for out in outputs),
                     f"6 walks at once on an empty cache: each output equals {file}")
        partial = os.path.join(shared, ".partial")
        left = os.listdir(partial) if os.path.isdir(partial) else []
        checks(not left, f"no temporary file left ({len(left)})")
        single = os.path.join(work, "single")
        dumps.run_stackwalk(stackwalk, directory, args + ["--symbol-cache", single])
        names = lambda root: sorted(os.path.relpath(p, root) for p in entries(root))
        checks(names(shared) == names(single) and names(single),
               f"the concurrent walks left the {len(names(single))} entries one walk makes")
    return checks.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
