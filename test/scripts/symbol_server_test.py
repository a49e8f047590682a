#!/usr/bin/env python3
"""Debug files from symbol servers on 127.0.0.1, against the same files on disk.

Usage: symbol_server_test.py STACKWALK UNPACKED_DUMPS_DIR

- SSQP: libc.so.6's debug file served as _.debug/elf-buildid-sym-ID/_.debug by a
  plain HTTP server (python3 -m http.server), with a sysroot that lacks it:
  the frames in libc are named, with lines and arguments, as with the file on
  disk; a second walk asks the server nothing (its log), and a server that
  does not answer is named in a warning without failing the walk.
- debuginfod (Debian's server, -F over a folder of the stripped program, its
  debug file, libc and libc's debug file): the stripped program's core walked
  with no local module file but the sysroot's libraries: names, lines and
  arguments equal the walk with every file on disk; with the server stopped,
  a second walk gives the same report and no warning (nothing was asked).
- A Microsoft store keeping the PDB of pdb-threads.exe as a cabinet
  (pdb-threads.pd_, made by gcab): the Windows dump's frames named, with lines,
  as with the PDB on disk, and the module says it came from the .pd_ URL.
- A Microsoft store of the Windows dumps' images (Wine's DLLs and the programs, keyed by
  TimeDateStamp and SizeOfImage) and PDB, with no file on disk: frames, lines and arguments as
  with the files on disk; a second walk asks nothing; another image under a key is refused.
- The same PDB behind a file.ptr whose PATH is a URL on the server: followed, the
  frames as with the PDB on disk; a file.ptr's MSG, and a PATH to a file share,
  are warnings.
- An HTML page answered (200) where the PDB should be: not kept, a warning; the miss
  remembered, and asked again after an hour.
"""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import time

import dumps

check = dumps.Checks()


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    return next(line.split()[-1] for line in out.splitlines() if "Build ID" in line)


def debug_file(unpacked, library):
    ident = build_id(os.path.join(unpacked, "sysroot", library))
    return ident, os.path.join(unpacked, "sysroot", "usr", "lib", "debug", ".build-id", ident[:2], ident[2:] + ".debug")


def bare_sysroot(unpacked, tmp):
    """The dumps' sysroot without usr/lib/debug: libraries only."""
    root = os.path.join(tmp, "sysroot")
    if os.path.isdir(root):
        return root
    os.makedirs(os.path.join(root, "usr", "lib"))
    real = os.path.join(unpacked, "sysroot")
    os.symlink(os.path.join(real, "usr", "lib64"), os.path.join(root, "usr", "lib64"))
    os.symlink(os.path.join(real, "usr", "lib", "x86_64-linux-gnu"), os.path.join(root, "usr", "lib", "x86_64-linux-gnu"))
    os.symlink("usr/lib", os.path.join(root, "lib"))
    os.symlink("usr/lib64", os.path.join(root, "lib64"))
    return root


def walk(stackwalk, unpacked, core, *args, env=None):
    result = subprocess.run([stackwalk, os.path.join(unpacked, core), "-a", "--json", "--args", "--no-host-files",
                             *args], capture_output=True, text=True, timeout=300, cwd=unpacked,
                            env=None if env is None else dict(os.environ, **env))
    if result.returncode != 0:
        raise RuntimeError(f"stackwalk exited {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def frames(report):
    return [[(f["module"], f["function"], f["file"], f["line"], json.dumps(f.get("arguments"))) for f in t["frames"]]
            for t in report["threads"]]


def first_difference(report, expected):
    """The first frame where two reports differ, and the first report's warnings."""
    for ours, theirs in zip(frames(report), frames(expected)):
        for a, b in zip(ours + [None], theirs + [None]):
            if a != b:
                return f"{a} vs {b}; warnings {report['warnings']}"
    return f"thread counts; warnings {report['warnings']}"


def module(report, name):
    return next(m for m in report["modules"] if m["name"] == name)


def ssqp(stackwalk, unpacked, tmp):
    dump = next(d for d in dumps.manifest() if d["name"] == "crash-segv")
    ident, debug = debug_file(unpacked, "usr/lib/x86_64-linux-gnu/libc.so.6")
    store = os.path.join(tmp, "ssqp", "_.debug", f"elf-buildid-sym-{ident}")
    os.makedirs(store)
    os.symlink(debug, os.path.join(store, "_.debug"))
    on_disk = walk(stackwalk, unpacked, dump["core"], *dumps.stackwalk_args(dump)[1:])
    local = ["--sysroot", bare_sysroot(unpacked, tmp), "--module-path", "bin", "--module-path", "debug"]
    without = walk(stackwalk, unpacked, dump["core"], *local)
    check(module(without, "libc.so.6")["symbols"] != "dwarf", "ssqp: without its debug file libc has no DWARF")
    with dumps.HttpServer(os.path.join(tmp, "ssqp"), os.path.join(tmp, "http.log")) as server:
        served = ["--symbol-server", server.url, "--symbol-cache", os.path.join(tmp, "ssqp-cache")]
        fetched = walk(stackwalk, unpacked, dump["core"], *local, *served)
        libc = module(fetched, "libc.so.6")
        check(libc["symbols"] == "dwarf" and f"_.debug/elf-buildid-sym-{ident}/_.debug" in (libc["note"] or ""),
              f"ssqp: libc's debug file fetched by build-id, and the module says from where ({libc['note']})")
        check(frames(fetched) == frames(on_disk), "ssqp: every frame, line and argument as with the file on disk")
        check(frames(fetched) != frames(without), "ssqp: ... which the walk without it lacks")
        asked = server.requests()
        again = walk(stackwalk, unpacked, dump["core"], *local, *served)
        check(server.requests() == asked and frames(again) == frames(fetched),
              f"ssqp: a second walk asks the server nothing ({asked} request(s) the first time)")
    # Another program's debug file under libc's key: rejected by its build-id, and the note
    # names the URL it came from.
    other = os.path.join(unpacked, "bin", "stripped-debuglink.debug")
    wrong = os.path.join(tmp, "ssqp-wrong", "_.debug", f"elf-buildid-sym-{ident}")
    os.makedirs(wrong)
    os.symlink(other, os.path.join(wrong, "_.debug"))
    with dumps.HttpServer(os.path.join(tmp, "ssqp-wrong"), os.path.join(tmp, "http-wrong.log")) as server:
        mismatched = walk(stackwalk, unpacked, dump["core"], *local, "--symbol-server", server.url,
                          "--symbol-cache", os.path.join(tmp, "ssqp-wrong-cache"))
    note = module(mismatched, "libc.so.6")["note"] or ""
    check(module(mismatched, "libc.so.6")["symbols"] != "dwarf" and "rejected" in note and
          f"(fetched from {server.url}_.debug/elf-buildid-sym-{ident}/_.debug)" in note,
          f"ssqp: a fetched debug file of another build-id is rejected, and the note names its URL ({note})")
    dead = walk(stackwalk, unpacked, dump["core"], *local, "--symbol-server", f"http://127.0.0.1:{dumps.free_port()}/",
                "--symbol-cache", os.path.join(tmp, "cold-cache"), "--symbol-timeout", "5")
    check(any("failed" in w and "127.0.0.1" in w for w in dead["warnings"]) and frames(dead) == frames(without),
          "ssqp: a server that does not answer is named in a warning; the walk goes on without it")


def debuginfod(stackwalk, unpacked, tmp):
    if not shutil.which("debuginfod"):
        print("     debuginfod: the server is not installed (Debian package debuginfod); skipped")
        return
    dump = next(d for d in dumps.manifest() if d["name"] == "stripped-debuglink")
    served = os.path.join(tmp, "debuginfod-files")
    os.makedirs(served)
    program = os.path.join(unpacked, dump["executable"])
    libc = os.path.join(unpacked, "sysroot", "usr", "lib", "x86_64-linux-gnu", "libc.so.6")
    for path in (program, program + ".debug", libc, debug_file(unpacked, "usr/lib/x86_64-linux-gnu/libc.so.6")[1]):
        os.symlink(path, os.path.join(served, os.path.basename(path)))
    port = dumps.free_port()
    log = open(os.path.join(tmp, "debuginfod.log"), "w+")
    server = subprocess.Popen(["debuginfod", "-F", "-L", "-p", str(port), "-d", os.path.join(tmp, "debuginfod.sqlite"),
                               "-t", "0", "-g", "0", served], stdout=log, stderr=log)
    try:
        ident = build_id(program)
        # Served once its scan has indexed the folder: each file it will be asked
        # for (under load, libc's debug file was indexed after the program's
        # files, and a walk that asked before then took libc's 404 as a miss).
        for served_id, kind in ((ident, "debuginfo"), (ident, "executable"), (build_id(libc), "debuginfo"),
                                (build_id(libc), "executable")):
            dumps.wait_for_url(f"http://127.0.0.1:{port}/buildid/{served_id}/{kind}", seconds=60, any_status=False)
        on_disk = walk(stackwalk, unpacked, dump["core"], *dumps.stackwalk_args(dump)[1:])
        sysroot = bare_sysroot(unpacked, tmp)
        cache = os.path.join(tmp, "debuginfod-cache")
        args = ["--sysroot", sysroot, "--debuginfod", f"http://127.0.0.1:{port}", "--symbol-cache", cache]
        fetched = walk(stackwalk, unpacked, dump["core"], *args)
        exe = module(fetched, os.path.basename(program))
        check(exe["file"] and exe["file"].startswith(cache) and exe["symbols"] == "dwarf"
              and f"buildid/{ident}/executable" in (exe["note"] or ""),
              f"debuginfod: the program and its debug file fetched by build-id ({exe['file']}, {exe['note']})")
        check(frames(fetched) == frames(on_disk),
              "debuginfod: every frame, line and argument as with the files on disk"
              + ("" if frames(fetched) == frames(on_disk) else f" (first difference: {first_difference(fetched, on_disk)})"))
        # DEBUGINFOD_URLS as gdb and eu-stack read it, unless --debuginfod says otherwise.
        server_env = {"DEBUGINFOD_URLS": f"http://127.0.0.1:{port}"}
        env_cache = ["--sysroot", sysroot, "--symbol-cache", os.path.join(tmp, "debuginfod-env-cache")]
        from_env = walk(stackwalk, unpacked, dump["core"], *env_cache, env=server_env)
        check(frames(from_env) == frames(on_disk), "debuginfod: the server in DEBUGINFOD_URLS is asked without --debuginfod")
        none = walk(stackwalk, unpacked, dump["core"], *env_cache[:2], "--debuginfod", "",
                    "--symbol-cache", os.path.join(tmp, "debuginfod-none-cache"), env=server_env)
        check(module(none, os.path.basename(program))["file"] is None,
              "debuginfod: --debuginfod '' asks no server, whatever DEBUGINFOD_URLS says")
    finally:
        server.terminate()
        server.wait()
    again = walk(stackwalk, unpacked, dump["core"], *args)
    check(frames(again) == frames(fetched) and not any("failed" in w for w in again["warnings"]),
          "debuginfod: with the server stopped, a second walk gives the same frames and asks nothing")


def pdb_store_entry(unpacked, root):
    """The Windows test dumps' folder, pdb-threads.pdb's file there, and its entry in a
    Microsoft store at ROOT (pdb-threads.pdb/GUIDAGE/), made empty."""
    windows = os.path.join(unpacked, "windows")
    pdb_dir = os.path.join(windows, "symbols", "pdb-threads.pdb")
    key = next(d for d in os.listdir(pdb_dir) if os.path.isdir(os.path.join(pdb_dir, d)))
    entry = os.path.join(root, "pdb-threads.pdb", key)
    os.makedirs(entry)
    return windows, os.path.join(pdb_dir, key, "pdb-threads.pdb"), entry


def cabinet(stackwalk, unpacked, tmp):
    if not shutil.which("gcab"):
        print("skip cabinet: gcab is not installed (Debian package gcab)")
        return
    windows, pdb, store = pdb_store_entry(unpacked, os.path.join(tmp, "ms"))
    shutil.copy(pdb, tmp)
    subprocess.run(["gcab", "-c", "-z", os.path.join(store, "pdb-threads.pd_"), "pdb-threads.pdb"], cwd=tmp,
                   check=True)
    local = ["--module-path", "bin", "--module-path", "system32"]
    on_disk = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local, "--module-path", "symbols")
    without = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local)
    with dumps.HttpServer(os.path.join(tmp, "ms"), os.path.join(tmp, "ms.log")) as server:
        fetched = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local, "--symbol-server", server.url,
                       "--symbol-cache", os.path.join(tmp, "ms-cache"))
    exe = module(fetched, "pdb-threads.exe")
    check(exe["symbols"] == "pdb" and "pdb-threads.pd_" in (exe["note"] or ""),
          f"cabinet: the PDB fetched as pdb-threads.pd_ and extracted ({exe['note']})")
    check(frames(fetched) == frames(on_disk) and frames(fetched) != frames(without),
          "cabinet: every frame and line as with the PDB on disk (and not as without it)")
    # A cabinet cut short: not used, and a warning names its URL and why.
    with open(os.path.join(store, "pdb-threads.pd_"), "r+b") as f:
        f.truncate(200)
    with dumps.HttpServer(os.path.join(tmp, "ms"), os.path.join(tmp, "ms.log")) as server:
        damaged = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local, "--symbol-server", server.url,
                       "--symbol-cache", os.path.join(tmp, "ms-cache-damaged"))
    said = [w for w in damaged["warnings"] if "pdb-threads.pd_: " in w]
    check(module(damaged, "pdb-threads.exe")["symbols"] != "pdb" and said,
          f"cabinet cut short: not used, and a warning says so ({said})")


def pe_store_key(path):
    """A PE image's key in a Microsoft symbol store, read from its own headers as symstore.exe
    reads it: TimeDateStamp (%08X) then SizeOfImage (%x)."""
    with open(path, "rb") as f:
        headers = f.read(4096)
    pe = struct.unpack_from("<I", headers, 0x3C)[0]
    stamp = struct.unpack_from("<I", headers, pe + 8)[0]
    size_of_image = struct.unpack_from("<I", headers, pe + 24 + 56)[0]  # the optional header's field
    return f"{stamp:08X}{size_of_image:x}"


def pe_store(windows, root):
    """A Microsoft store at ROOT of every image the Windows dumps load (the programs and
    Wine's DLLs), each under the key its own headers give, and pdb-threads.pdb; returns
    {image name: key}."""
    keys = {}
    for folder in ("bin", "system32"):
        for name in os.listdir(os.path.join(windows, folder)):
            path = os.path.join(windows, folder, name)
            keys[name] = pe_store_key(path)
            os.makedirs(os.path.join(root, name, keys[name]))
            os.symlink(path, os.path.join(root, name, keys[name], name))
    shutil.copytree(os.path.join(windows, "symbols"), root, dirs_exist_ok=True)
    return keys


def pe_images(stackwalk, unpacked, tmp):
    """The Windows dumps with no file on disk but a Microsoft store of their images (found by
    the TimeDateStamp and SizeOfImage the dump records) and PDB: every frame, line and argument
    as with the files on disk, each module's note naming the URL its file came from, on the walk
    that fetched it and on a later one, which asks the server nothing. An image of another
    identity under ntdll.dll's key is refused on the walk that fetches it, and its note names the
    URL."""
    windows = os.path.join(unpacked, "windows")
    root = os.path.join(tmp, "pe-store")
    keys = pe_store(windows, root)
    cache = os.path.join(tmp, "pe-cache")
    differ, unnamed, asked_again, deeper = [], [], [], 0
    with dumps.HttpServer(root, os.path.join(tmp, "pe.log")) as server:
        served = ["--symbol-server", server.url, "--symbol-cache", cache]
        for dump in dumps.manifest("windows"):
            on_disk = walk(stackwalk, windows, *dumps.windows_args(dump))
            without = walk(stackwalk, windows, dump["dump"])
            fetched = walk(stackwalk, windows, dump["dump"], *served)
            asked = server.requests()
            again = walk(stackwalk, windows, dump["dump"], *served)
            if server.requests() != asked:
                asked_again.append(dump["name"])
            for report in (fetched, again):
                if frames(report) != frames(on_disk):
                    differ.append(f"{dump['name']}: {first_difference(report, on_disk)}")
                unnamed += [f"{dump['name']} {m['name']} ({m['note']})" for m in report["modules"]
                            if m["file"] and f"fetched from {server.url}{m['name']}/{keys[m['name']]}/{m['name']}"
                            not in (m["note"] or "")]
            deeper += sum(map(len, frames(fetched))) - sum(map(len, frames(without)))
    check(not differ, "PE images from a Microsoft store: every Windows dump's frames, lines and arguments as with "
                      f"the files on disk ({deeper} frames more than without them)" + (f" ({differ})" if differ else ""))
    check(not unnamed, "PE images from a Microsoft store: each module's note names the URL of its file, on the walk "
                       "that fetched it and on the next" + (f" (not: {unnamed})" if unnamed else ""))
    check(not asked_again, "PE images from a Microsoft store: a second walk of each dump asks the server nothing"
                           + (f" (asked: {asked_again})" if asked_again else ""))
    wrong = os.path.join(tmp, "pe-store-wrong")
    entry = os.path.join(wrong, "ntdll.dll", keys["ntdll.dll"])
    os.makedirs(entry)
    shutil.copy(os.path.join(windows, "system32", "kernel32.dll"), os.path.join(entry, "ntdll.dll"))
    with dumps.HttpServer(wrong, os.path.join(tmp, "pe-wrong.log")) as server:
        refused = walk(stackwalk, windows, "dumps/threads-O2.dmp", "--symbol-server", server.url,
                       "--symbol-cache", os.path.join(tmp, "pe-wrong-cache"))
    note = module(refused, "ntdll.dll")["note"] or ""
    check(module(refused, "ntdll.dll")["file"] is None and "rejected" in note and "TimeDateStamp" in note
          and f"(fetched from {server.url}ntdll.dll/{keys['ntdll.dll']}/ntdll.dll)" in note,
          f"PE images from a Microsoft store: kernel32.dll served as ntdll.dll is refused by its SizeOfImage, "
          f"and the note names its URL ({note})")


def pointer(stackwalk, unpacked, tmp):
    """A store whose PDB entry is a file.ptr: a PATH that is a URL is followed (the PDB names the
    frames as on disk, and the module says the URL it came from); a MSG, or a PATH to a file
    share, is a warning."""
    root = os.path.join(tmp, "ptr")
    windows, pdb, entry = pdb_store_entry(unpacked, root)
    os.makedirs(os.path.join(root, "elsewhere"))
    shutil.copy(pdb, os.path.join(root, "elsewhere"))
    local = ["--module-path", "bin", "--module-path", "system32"]
    on_disk = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local, "--module-path", "symbols")
    with dumps.HttpServer(root, os.path.join(tmp, "ptr.log")) as server:
        results = {}
        for case, text in (("url", f"PATH:{server.url}elsewhere/pdb-threads.pdb"),
                           ("msg", "MSG: withdrawn by the vendor"), ("share", "PATH:\\\\files\\symbols\\x.pdb")):
            with open(os.path.join(entry, "file.ptr"), "w") as f:
                f.write(text + "\r\n")
            results[case] = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *local, "--symbol-server", server.url,
                                 "--symbol-cache", os.path.join(tmp, "ptr-cache-" + case))
    exe = module(results["url"], "pdb-threads.exe")
    check(exe["symbols"] == "pdb" and "elsewhere/pdb-threads.pdb" in (exe["note"] or "")
          and frames(results["url"]) == frames(on_disk),
          f"file.ptr: its URL followed, every frame and line as with the PDB on disk ({exe['note']})")
    said = lambda case, words: any("file.ptr" in w and words in w for w in results[case]["warnings"])
    check(said("msg", "says: withdrawn by the vendor") and said("share", "a file share stackwalk does not open"),
          f"file.ptr: a MSG and a file share's PATH are warnings ({results['msg']['warnings']}, "
          f"{results['share']['warnings']})")


def not_a_pdb(stackwalk, unpacked, tmp):
    """A store that answers 200 with an HTML page where the PDB should be: not kept, a warning
    says what came instead, and the miss is remembered for an hour: a second walk asks nothing,
    one after the hour asks again (and keeps the PDB that is there by then)."""
    root = os.path.join(tmp, "html")
    windows, pdb, entry = pdb_store_entry(unpacked, root)
    with open(os.path.join(entry, "pdb-threads.pdb"), "w") as f:
        f.write("<!DOCTYPE html><html><body>Please sign in</body></html>\n")
    local = ["--module-path", "bin", "--module-path", "system32"]
    cache = os.path.join(tmp, "html-cache")
    log = os.path.join(tmp, "html.log")
    with dumps.HttpServer(root, log) as server:
        args = [*local, "--symbol-server", server.url, "--symbol-cache", cache]
        first = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *args)
        said = [w for w in first["warnings"] if "not a PDB" in w and "<!DOCTYPE html>" in w]
        kept = [os.path.join(d, f) for d, _, files in os.walk(cache) for f in files if f.endswith(".pdb")]
        check(said and not kept and module(first, "pdb-threads.exe")["symbols"] != "pdb",
              f"an HTML page served as the PDB: not kept, a warning says what came ({said}, kept {kept})")
        asked = lambda: sum("pdb-threads.pdb" in line for line in open(log))
        before = asked()
        walk(stackwalk, windows, "dumps/pdb-threads.dmp", *args)
        check(asked() == before, "an HTML page served as the PDB: remembered as a miss, a second walk asks nothing")
        shutil.copy(pdb, entry)
        misses = os.path.join(cache, ".misses")
        hour_ago = time.time() - 3700
        for marker in os.listdir(misses):
            os.utime(os.path.join(misses, marker), (hour_ago, hour_ago))
        later = walk(stackwalk, windows, "dumps/pdb-threads.dmp", *args)
    check(module(later, "pdb-threads.exe")["symbols"] == "pdb",
          "a miss more than an hour old is asked again: the PDB uploaded since is used")


def main(stackwalk, unpacked, options):
    with tempfile.TemporaryDirectory() as tmp:
        ssqp(stackwalk, unpacked, tmp)
        debuginfod(stackwalk, unpacked, tmp)
        cabinet(stackwalk, unpacked, tmp)
        pe_images(stackwalk, unpacked, tmp)
        pointer(stackwalk, unpacked, tmp)
        not_a_pdb(stackwalk, unpacked, tmp)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
