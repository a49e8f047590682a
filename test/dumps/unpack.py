#!/usr/bin/env python3
"""unpack.py SRC_DIR OUT_DIR: decompress test/dumps for the tests.

Every SRC_DIR/**/NAME.xz becomes OUT_DIR/**/NAME (same relative layout, .xz removed).
Files whose output is already newer than the .xz and of the recorded size are skipped.
Files under bin/ get the exec bit (the .debug files too; harmless). The symlinks listed
under "sysroot_links" in SRC_DIR/dumps.json are created in OUT_DIR/sysroot, so that the
library names the dynamic linker recorded (/lib/x86_64-linux-gnu/..., /lib64/...) resolve
to the files stored at the paths the cores' NT_FILE notes record (/usr/lib/...), as on
Debian 12 with its merged /usr. dumps.json itself is copied to OUT_DIR.
Python 3 standard library only.
"""
import json
import lzma
import os
import shutil
import stat
import sys


def up_to_date(src, dst):
    try:
        d = os.stat(dst)
    except FileNotFoundError:
        return False
    return d.st_mtime >= os.stat(src).st_mtime


def unpack_one(src, dst, executable):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = dst + ".tmp%d" % os.getpid()
    with lzma.open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
    mode = 0o755 if executable else 0o644
    os.chmod(tmp, mode)
    os.replace(tmp, dst)


def make_link(out_dir, rel, target):
    path = os.path.join(out_dir, rel)
    if os.path.islink(path):
        if os.readlink(path) == target:
            return
        os.unlink(path)
    elif os.path.exists(path):
        return  # a real file or directory is already there: leave it
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        os.symlink(target, path)
    except OSError:
        # No symlinks (e.g. some Windows setups): copy instead.
        real = os.path.join(os.path.dirname(path), target)
        if os.path.isdir(real):
            shutil.copytree(real, path)
        elif os.path.exists(real):
            shutil.copy2(real, path)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: unpack.py SRC_DIR OUT_DIR\n")
        return 2
    src_dir, out_dir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    done = skipped = 0
    for dirpath, dirnames, filenames in os.walk(src_dir):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git",))
        rel_dir = os.path.relpath(dirpath, src_dir)
        for fn in sorted(filenames):
            if not fn.endswith(".xz"):
                continue
            src = os.path.join(dirpath, fn)
            rel = os.path.normpath(os.path.join(rel_dir, fn[:-3]))
            dst = os.path.join(out_dir, rel)
            if up_to_date(src, dst):
                skipped += 1
                continue
            top = rel.split(os.sep, 1)[0]
            unpack_one(src, dst, executable=(top == "bin"))
            done += 1
    manifest = os.path.join(src_dir, "dumps.json")
    if os.path.exists(manifest):
        with open(manifest) as f:
            m = json.load(f)
        sysroot = os.path.join(out_dir, m.get("sysroot", "sysroot"))
        for rel, target in sorted(m.get("sysroot_links", {}).items()):
            make_link(sysroot, rel, target)
        os.makedirs(out_dir, exist_ok=True)
        if not up_to_date(manifest, os.path.join(out_dir, "dumps.json")):
            shutil.copy2(manifest, os.path.join(out_dir, "dumps.json"))
    print("unpack.py: %d unpacked, %d up to date, into %s" % (done, skipped, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
