#!/usr/bin/env python3
"""The .NET dumps of test/dumps/dotnet against two independent oracles:

- ClrMD (the runtime's own DAC, run when the dumps were made; expected/*.clrmd.json):
  `stackwalk --managed-only` must list, per thread, the same managed frames (same
  MethodDesc, stack pointer, instruction pointer, and name: ClrMD's signature, with its
  instantiations, character for character) and the same runtime
  Frames (by name, address and, for an InlinedCallFrame of a P/Invoke, the method it
  calls) in the same order. ClrMD lists an InlinedCallFrame
  with an active call twice (once per context it yields); the two are one Frame.
  Each thread's last thrown exception (object, type, message) is ClrMD's
  CurrentException, and threads without one have none.
- the program's own record (System.Diagnostics.StackTrace taken before blocking;
  dotnet_checks.py, shared with dotnet_fresh_test.py): each scenario thread's methods
  appear in that order in the mixed-mode walk and in --managed-only, with the runtime
  Frames expected among them and the recorded MethodDescs; every managed frame has a
  MethodDesc and a name; the crashing thread; the runtime's version and threads
  (also by --runtime-info).
Also: native frames around the managed ones are named, and dumps without a (readable)
runtime say why in one line.

Usage: dotnet_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import subprocess
import sys

import dotnet_checks
import dumps
from dotnet_checks import bare_name

check = dumps.Checks()


def check_without_files(stackwalk, folder, dump):
    """A full dump holds every page of every module: with no module file at all (an empty
    sysroot, no module path, no host files), the contract descriptor comes from libcoreclr.so's
    loaded image in the dump, --managed-only is the same walk as with the files, and so is the
    whole mixed walk: each ELF module rebuilt from the dump's memory and unwound by its own
    .eh_frame."""
    frame = lambda f: (f["kind"], f["function"] or f["frame_name"], f["method_desc"], f["ip"], f["sp"])
    walk = lambda args: [[frame(f) for f in t["frames"]] for t in
                         dotnet_checks.walk(stackwalk, args, folder, "--managed-only")["threads"]]
    with_files = walk(dumps.dotnet_args(dump))
    import tempfile
    with tempfile.TemporaryDirectory() as empty:
        args = [dump["core"], "--sysroot", empty, "--no-host-files"]
        without = walk(args)
        info = json.loads(dumps.run_in(stackwalk, args + ["--runtime-info", "--json"], folder).stdout)["runtime"]
        check_mixed_walk_without_files(stackwalk, folder, dump, args)
    managed = sum(f[0] == "managed" for t in without for f in t)
    check(without == with_files and managed > 40,
          f"park-full without module files: --managed-only equals the walk with them ({managed} managed frames)")
    check(info["descriptor_source"] == "dump (the module's loaded image: no file)",
          f"park-full without module files: --runtime-info says the descriptor came from the runtime's loaded "
          f"image in the dump, without its file ({info['descriptor_source']})")
    check_exported_names(stackwalk, folder, dump)


def check_mixed_walk_without_files(stackwalk, folder, dump, args):
    """Every thread's physical frames (kind, ip, sp) and stop reason without module files equal
    those with them (tail-call frames are DWARF's: the debug files are not at hand), and each ELF module with a file in the walk with files is rebuilt from the
    dump's memory in the walk without."""
    def walk(arguments):
        report = dotnet_checks.walk(stackwalk, arguments, folder)
        threads = [([(f["kind"], f["ip"], f["sp"]) for f in t["frames"] if not f["inlined"] and not f["tail_call"]],
                    t["stop_reason"])
                   for t in report["threads"]]
        return threads, {m["name"]: m for m in report["modules"]}
    with_files, modules = walk(dumps.dotnet_args(dump))
    without, rebuilt = walk(args)
    frames = sum(len(t[0]) for t in with_files)
    differing = [i for i, (a, b) in enumerate(zip(with_files, without)) if a != b]
    check(len(without) == len(with_files) and not differing and frames > 200,
          f"park-full without module files: the mixed walk equals the walk with them ({frames} frames, "
          f"{len(with_files)} threads; threads differing: {differing or 'none'})")
    elf = [name for name, m in modules.items() if m["file"] and m["build_id"]]
    not_rebuilt = [name for name in elf if not (rebuilt[name]["note"] or "").startswith("rebuilt from the dump")]
    check(len(elf) >= 10 and not not_rebuilt,
          f"park-full without module files: {len(elf)} ELF modules rebuilt from the dump's memory "
          f"(not: {not_rebuilt or 'none'})")


def check_exported_names(stackwalk, folder, dump):
    """Native frames of the image-less modules named by their dynamic symbols in the dump: each
    name is one the module's file exports (nm -D), at the address the frame's offset implies."""
    files = {m["name"]: (m["file"], int(m["base"], 16))
             for m in dotnet_checks.walk(stackwalk, dumps.dotnet_args(dump), folder)["modules"] if m["file"]}
    import tempfile
    with tempfile.TemporaryDirectory() as empty:
        report = dotnet_checks.walk(stackwalk, [dump["core"], "--sysroot", empty, "--no-host-files"], folder)
    exports = {}
    def exported(module):
        if module not in exports:
            path, base = files[module]
            out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(folder, path)], capture_output=True,
                                 text=True).stdout
            exports[module] = {(base + int(v, 16), n.split("@")[0]) for v, _, n in (l.split() for l in out.splitlines()
                                                                                   if len(l.split()) == 3)}
        return exports[module]
    named, wrong = 0, []
    for thread in report["threads"]:
        for f in thread["frames"]:
            if f["kind"] != "native" or not f["function"] or f["module"] not in files or f["inlined"]:
                continue
            named += 1
            start = int(f["ip"], 16) - int(f["function_offset"] or "0x0", 16)
            if (start, f["function"]) not in exported(f["module"]):
                wrong.append((f["module"], f["function"], hex(start)))
    dynsym = {m["name"] for m in report["modules"] if m["symbols"] == "dynsym" and m["file"] is None}
    check(named >= 10 and {"libc.so.6", "libcoreclr.so"} <= dynsym and not wrong,
          f"park-full without module files: {named} native frames named by the dynamic symbols in the dump, "
          f"each a symbol its file exports there ({wrong[:3] or 'none differs'})")


def main():
    stackwalk, unpacked = sys.argv[1], os.path.abspath(sys.argv[2])
    folder = os.path.join(unpacked, "dotnet")
    if not os.path.isdir(folder):
        dumps.skip("the .NET dumps are not unpacked")
    manifest = dumps.manifest("dotnet")
    for dump in manifest:
        name = dump["name"]
        args = dumps.dotnet_args(dump)
        ours = dotnet_checks.walk(stackwalk, args, folder, "--managed-only")
        with open(os.path.join(dumps.SOURCE, "dotnet", dump["oracle"])) as f:
            dotnet_checks.check_against_clrmd(check, name, ours, json.load(f))
        mixed = dotnet_checks.walk(stackwalk, args, folder)
        dotnet_checks.check_dump(check, name, dump, mixed, ours)
        dotnet_checks.check_runtime_info(check, name, stackwalk, args, folder, dump)

    full = next((d for d in manifest if d["name"] == "park-full"), None)
    if full:
        check_without_files(stackwalk, folder, full)
    # A process without a runtime: no runtime, no warning about one.
    native = dumps.run_in(stackwalk, ["cores/threads-O0-fp.core", "--json", "--sysroot", "sysroot"], unpacked)
    document = json.loads(native.stdout)
    check(document["runtimes"] == [] and not any(".NET" in w for w in document["warnings"]),
          "a native process: no runtime and no warning about one")
    # A runtime without a contract descriptor (.NET Core 2.0): native stacks and one line why.
    triage = os.path.join(dumps.SHARED, "corpus", "dotnet", "diagnostics", "triagedump.gz")
    if os.path.exists(triage):
        import gzip
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "triagedump")
            with gzip.open(triage) as fin, open(path, "wb") as fout:
                fout.write(fin.read())
            result = dumps.run_in(stackwalk, [path, "--json", "--all-threads"], tmp)
            document = json.loads(result.stdout)
            reasons = [w for w in document["warnings"] if "managed frames are unavailable" in w]
            check(result.returncode == 0 and len(reasons) == 1 and document["threads"],
                  "triagedump (.NET Core 2.0): native stacks and one reason: " + (reasons[0] if reasons else "none"))
    else:
        print("skip triagedump: ../shared is absent")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
