#!/usr/bin/env python3
"""The command line's contract: exit codes, thread selection, limits, and what
stackwalk says about files that are not dumps, truncated cores and missing
module files.

Usage: cli_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import dumps

check = dumps.Checks()
run = dumps.run_in


def one_line_error(result):
    lines = result.stderr.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("stackwalk: ")


def notes(data):
    """(offset of the note header, descriptor offset, type) of every note in a core."""
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    for i in range(phnum):
        p_type, _, offset, _, _, size = struct.unpack_from("<IIQQQQ", data, phoff + 56 * i)
        position = offset
        while p_type == 4 and position + 12 <= offset + size:
            namesz, descsz, note_type = struct.unpack_from("<III", data, position)
            yield position, position + 12 + ((namesz + 3) & ~3), note_type
            position += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)


def without_nt_file(core):
    """The core with its NT_FILE note's type changed, so readers skip it."""
    data = bytearray(core)
    for header, _, note_type in list(notes(data)):
        if note_type == 0x46494C45:
            struct.pack_into("<I", data, header + 8, 0x7FFF0000)
    return bytes(data)


def patch_note(core, note_type, offset, payload):
    """The core with `payload` written into the descriptor of its first note of a type."""
    data = bytearray(core)
    desc = next(d for _, d, t in notes(data) if t == note_type)
    data[desc + offset: desc + offset + len(payload)] = payload
    return bytes(data)


def with_codeview(dump, out, module_name, guid, age, pdb_name):
    """A copy of a minidump whose module gets the RSDS record Wine's writer leaves out."""
    data = bytearray(open(dump, "rb").read())
    count, directory = struct.unpack_from("<II", data, 8)
    streams = {t: rva for t, _, rva in (struct.unpack_from("<III", data, directory + 12 * i) for i in range(count))}
    modules = streams[4]
    record = b"RSDS" + guid + struct.pack("<I", age) + pdb_name.encode() + b"\0"
    for i in range(struct.unpack_from("<I", data, modules)[0]):
        entry = modules + 4 + 108 * i
        name_rva, = struct.unpack_from("<I", data, entry + 20)
        length, = struct.unpack_from("<I", data, name_rva)
        if data[name_rva + 4:name_rva + 4 + length].decode("utf-16-le").endswith(module_name):
            struct.pack_into("<II", data, entry + 76, len(record), len(data))
            data += record
    open(out, "wb").write(data)


def stdout_on_terminal(stackwalk, args, unpacked, env):
    """What stackwalk prints when its standard output is a terminal."""
    master, slave = pty.openpty()
    r = subprocess.run([stackwalk] + args, cwd=unpacked, stdout=slave, stderr=subprocess.DEVNULL, env=env, timeout=120)
    os.close(slave)
    screen = b""
    while chunk := read_or_nothing(master):
        screen += chunk
    os.close(master)
    return r.returncode, screen.decode(errors="replace")


def read_or_nothing(fd):
    try:
        return os.read(fd, 65536)
    except OSError:  # the terminal's other end is closed
        return b""


def check_colour(stackwalk, unpacked, args):
    """Colour on a terminal, as gdb paints: never on a pipe, nor with NO_COLOR or TERM=dumb."""
    sgr = "\x1b["
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    code, screen = stdout_on_terminal(stackwalk, args, unpacked, env)
    check(code == 0 and "\x1b[33mstore_field\x1b[0m" in screen and "\x1b[1;31m(crashed)\x1b[0m" in screen,
          "a terminal: functions yellow, the crashed thread red")
    for name, value in (("NO_COLOR", "1"), ("TERM", "dumb")):
        code, screen = stdout_on_terminal(stackwalk, args, unpacked, dict(env, **{name: value}))
        check(code == 0 and "store_field" in screen and sgr not in screen, f"a terminal with {name}={value}: no colour")
    code, screen = stdout_on_terminal(stackwalk, args + ["--color", "never"], unpacked, env)
    check(code == 0 and "store_field" in screen and sgr not in screen, "a terminal, --color never: no colour")
    r = run(stackwalk, args, unpacked)
    check(r.returncode == 0 and "store_field" in r.stdout and sgr not in r.stdout, "a pipe: no colour")
    r = run(stackwalk, args + ["--color", "always"], unpacked)
    check(r.returncode == 0 and "\x1b[34m0x" in r.stdout, "a pipe, --color always: colour (addresses blue)")
    r = run(stackwalk, args + ["--color", "sometimes"], unpacked)
    check(r.returncode == 2 and r.stderr.startswith("stackwalk: --color"), "--color sometimes: exit 2")


def check_verbose(stackwalk, unpacked, args):
    """-v: the stack pointer before the IP, under a header naming the columns."""
    plain = run(stackwalk, args, unpacked).stdout.splitlines()
    verbose = run(stackwalk, args + ["-v"], unpacked).stdout.splitlines()
    frames = [line for line in plain if line.startswith("  #")]
    header = [line for line in verbose if line.startswith("  #    stack pointer")]
    verbose_frames = [line for line in verbose if line.startswith("  #") and line not in header]
    threads = [line for line in plain if line.startswith("Thread ")]
    check(len(header) == len(threads) > 1 and len(frames) == len(verbose_frames)
          and all(len(v.split()) == len(p.split()) + 1 for p, v in zip(frames, verbose_frames)),
          "-v: a header for each thread, each frame line with one column more")


def check_crash_record_lost(stackwalk, dump):
    """A minidump cut short before its Exception stream: the crash is unknown,
    and why, not 'none recorded' (a script reading crash: null would think the
    process did not crash)."""
    with open(dump, "rb") as f:
        data = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        cut = os.path.join(tmp, "cut.dmp")
        with open(cut, "wb") as f:
            f.write(data[: len(data) * 6 // 10])
        report = json.loads(subprocess.run([stackwalk, cut, "--json"], capture_output=True, text=True).stdout)
        text = subprocess.run([stackwalk, cut], capture_output=True, text=True).stdout
    why = "the Exception stream (0x6) lies outside the file"
    invalid = [error.message for error in dumps.schema_validator().iter_errors(report)]
    check(report["crash"] is None and report.get("crash_unreadable") == why
          and f"crash:   unknown: {why}\n" in text and not invalid,
          f"a minidump cut before its Exception stream: crash unknown, and why "
          f"({report.get('crash_unreadable')!r}; {[l for l in text.splitlines() if l.startswith('crash:')]}; "
          f"schema: {invalid or 'valid'})")


def check_pdb_without_image(stackwalk, windows):
    """pdb-threads.exe's frames named by its PDB alone, found by the dump's CodeView record
    (added to a copy: Wine's writer leaves it out), as with the image at hand."""
    def frames(dump, *paths):
        args = [dump, "-a", "--json", "--no-host-files"] + [a for p in paths for a in ("--module-path", p)]
        report = json.loads(subprocess.run([stackwalk, *args], cwd=windows, capture_output=True, text=True).stdout)
        module = next(m for m in report["modules"] if m["name"] == "pdb-threads.exe")
        named = {(f["ip"], f["inlined"]): (f["function"], f["file"], f["line"])
                 for t in report["threads"] for f in t["frames"] if f["module"] == "pdb-threads.exe"}
        return module, named
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "pdb-threads.dmp")
        guid = struct.pack("<IHH", 0x718EF1A6, 0x2028, 0xA0FB) + bytes.fromhex("4C4C44205044422E")
        with_codeview(os.path.join(windows, "dumps", "pdb-threads.dmp"), dump, "pdb-threads.exe", guid, 1,
                      "Z:\\tmp\\stackwalk-windows-dumps\\bin\\pdb-threads.pdb")
        module, alone = frames(dump, "symbols", "system32")
        _, with_image = frames(dump, "symbols", "system32", "bin")
    check(module["symbols"] == "pdb" and module["file"] is None
          and (module["debug_file"] or "").startswith("symbols/pdb-threads.pdb/718EF1A62028A0FB4C4C44205044422E1/"),
          f"a PE module without its image gets its PDB by the dump's CodeView record ({module['debug_file']})")
    same = [ip for ip in alone if ip in with_image and alone[ip] == with_image[ip]]
    check(len(alone) >= 4 and all(name for name, _, _ in alone.values()) and len(same) == len(alone),
          f"... and each of its {len(alone)} frames is named with file and line as with the image "
          f"({sorted(set(alone.values()))[:3]})")


def check_rejected_debug_file(stackwalk, unpacked):
    """A debug file found by the module's debug link but not its own (another program's, or not
    an object file at all): not used, and the module's note says which file and why."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(unpacked, "bin", "stripped-debuglink"), tmp)
        debug = os.path.join(tmp, "stripped-debuglink.debug")
        for content, why in ((os.path.join(unpacked, "bin", "crash-segv"), "(build-id "),
                             (None, "(The file was not recognized as a valid object file)")):
            if content:
                shutil.copy(content, debug)
            else:
                with open(debug, "w") as f:
                    f.write("not an ELF file")
            r = run(stackwalk, ["cores/stripped-debuglink.core", "--json", "--sysroot", "sysroot", "--module-path", tmp],
                    unpacked)
            module = next(m for m in json.loads(r.stdout)["modules"] if m["name"] == "stripped-debuglink")
            check(module["symbols"] != "dwarf" and (module["note"] or "").startswith(f"debug file rejected: {debug} {why}"),
                  f"a wrong debug file is not used, and the note says why ({module['note']})")


def check_debug_link_in_sysroot(stackwalk, unpacked):
    """A sysroot's debug files by debug link, as gdb finds them: SYSROOT/usr/lib/debug, then the
    image's folder inside the sysroot (its recorded one), then the link's name."""
    core = os.path.join(unpacked, "cores", "stripped-debuglink.core")
    recorded = next(m["path"] for m in json.loads(run(stackwalk, [core, "--json", "--no-host-files"], unpacked).stdout)
                    ["modules"] if m["name"] == "stripped-debuglink")
    with tempfile.TemporaryDirectory() as root:
        folder = os.path.dirname(recorded).lstrip("/")
        os.makedirs(os.path.join(root, folder))
        shutil.copy(os.path.join(unpacked, "bin", "stripped-debuglink"), os.path.join(root, folder))
        debug_folder = os.path.join(root, "usr", "lib", "debug", folder)
        os.makedirs(debug_folder)
        shutil.copy(os.path.join(unpacked, "bin", "stripped-debuglink.debug"), debug_folder)
        report = json.loads(run(stackwalk, [core, "--json", "--sysroot", root], unpacked).stdout)
        module = next(m for m in report["modules"] if m["name"] == "stripped-debuglink")
        check(module["symbols"] == "dwarf" and module["debug_file"] == os.path.join(debug_folder, "stripped-debuglink.debug"),
              f"a debug file under SYSROOT/usr/lib/debug at the image's folder in the sysroot, by its debug link "
              f"({module['debug_file']}, {module['note']})")


def check_permission_denied(stackwalk, tmp, core):
    """A dump the user may not read: exit 3 and strerror's words. Root reads every file, so as
    root the walk runs as nobody (setpriv, util-linux)."""
    secret = os.path.join(tmp, "secret.core")
    shutil.copy(core, secret)
    os.chmod(secret, 0o600 if os.geteuid() == 0 else 0)
    os.chmod(tmp, 0o755)
    as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if os.geteuid() == 0 else []
    if as_user and not shutil.which("setpriv"):
        print("(setpriv is not installed: 'Permission denied' not checked)")
        return
    r = subprocess.run([*as_user, stackwalk, secret], capture_output=True, text=True)
    if r.stderr.startswith("setpriv:"):  # nobody cannot reach this build's stackwalk
        print(f"('Permission denied' not checked: {r.stderr.strip()})")
        return
    check(r.returncode == 3 and r.stderr.strip() == f"stackwalk: cannot open {secret}: Permission denied",
          f"a dump the user may not read: exit 3, 'Permission denied' ({r.returncode}: {r.stderr.strip()})")


def main(stackwalk, unpacked, options):
    core = "cores/crash-segv.core"
    files = ["--sysroot", "sysroot", "--module-path", "bin"]
    with tempfile.TemporaryDirectory() as tmp:
        text_file = os.path.join(tmp, "notes.txt")
        with open(text_file, "w") as f:
            f.write("not a dump\n" * 10)
        r = run(stackwalk, [text_file], unpacked)
        check(r.returncode == 3 and one_line_error(r), "a file that is not a dump: exit 3, one line")
        absent = os.path.join(tmp, "absent.core")
        r = run(stackwalk, [absent], unpacked)
        check(r.returncode == 3 and one_line_error(r) and r.stderr.strip() ==
              f"stackwalk: cannot open {absent}: No such file or directory", "a missing file: exit 3, why, one line")
        r = run(stackwalk, [tmp], unpacked)
        check(r.returncode == 3 and "Is a directory" in r.stderr, "a directory: exit 3, says so")
        check_permission_denied(stackwalk, tmp, os.path.join(unpacked, core))
        check_rejected_debug_file(stackwalk, unpacked)
        check_debug_link_in_sysroot(stackwalk, unpacked)
        for flag in ("--json", "--ndjson"):
            r = run(stackwalk, [text_file, flag], unpacked)
            error = json.loads(r.stdout) if r.stdout.strip() else {}
            check(r.returncode == 3 and error.get("dump", {}).get("path") == text_file and error.get("error", {}).get("kind") == "unreadable",
                  f"{flag}, one unreadable dump: exit 3 and the error object")
        r = run(stackwalk, [], unpacked)
        check(r.returncode == 2 and r.stderr.startswith("stackwalk: no dump given"), "no dump argument: exit 2")
        r = run(stackwalk, [core, "--no-such-option"], unpacked)
        check(r.returncode == 2 and r.stderr.startswith("stackwalk: "), "an unknown option: exit 2")
        r = run(stackwalk, [core, "--all"], unpacked)
        check(r.returncode == 2 and "did you mean --all-threads?" in r.stderr, "--all: exit 2, did you mean --all-threads?")
        r = run(stackwalk, [core, "--max-frames", "0"], unpacked)
        check(r.returncode == 2, "--max-frames 0: exit 2")
        r = run(stackwalk, ["--version"], unpacked)
        commit = re.search(r"\(([0-9a-f]{12})(-dirty)?, LLVM 19", r.stdout)
        if os.path.isdir(os.path.join(dumps.ROOT, ".git")):
            known = commit and subprocess.run(["git", "-C", dumps.ROOT, "cat-file", "-e", commit.group(1) + "^{commit}"],
                                              capture_output=True).returncode == 0
        else:
            known = "(unknown commit, LLVM 19" in r.stdout
        check(r.returncode == 0 and r.stdout.startswith("stackwalk ") and known,
              f"--version: the version, the build's commit (one of this repository's) and LLVM's ({r.stdout.strip()})")
        for args, what in ((["-e", "/nonexistent/exe"], "-e /nonexistent/exe"),
                           (["--sysroot", "/nonexistent"], "--sysroot /nonexistent"),
                           (["--module-path", "/nonexistent"], "--module-path /nonexistent"),
                           (["--module-path", text_file], f"--module-path {text_file}"),
                           (["--perf-map", "/nonexistent.map"], "--perf-map /nonexistent.map")):
            r = run(stackwalk, [core] + args, unpacked)
            check(r.returncode == 2 and r.stderr.startswith(f"stackwalk: {what}: ") and not r.stdout,
                  f"{what}: exit 2 naming the path and why ({r.stderr.strip()})")
        r = run(stackwalk, ["bin/crash-segv", core], unpacked)
        check(r.returncode == 1 and "bin/crash-segv is an executable or shared library, not a core" in r.stderr
              and "with -e" in r.stderr, f"gdb's order (EXE CORE): a hint to give the executable with -e (exit {r.returncode}: "
              "one of two dumps unreadable)")
        with open(os.path.join(unpacked, core), "rb") as f:
            piped = subprocess.run([stackwalk, "-", "--summary"] + files, cwd=unpacked, stdin=f, capture_output=True,
                                   text=True)
        check(piped.returncode == 0 and "(crashed): crash-segv!store_field" in piped.stdout, "-: a dump read from stdin")
        with open(os.path.join(unpacked, core), "rb") as f:
            piped = subprocess.run(f"cat {core} | {stackwalk} /dev/stdin --summary {' '.join(files)}", shell=True,
                                   cwd=unpacked, capture_output=True, text=True)
        check(piped.returncode == 0 and "(crashed): crash-segv!store_field" in piped.stdout, "/dev/stdin, a pipe")

        # One value per flag: dump paths after a repeatable option stay dumps.
        r = run(stackwalk, ["--ndjson", "--module-path", "bin", core, "cores/sig-abort.core", "--sysroot", "sysroot"],
                unpacked)
        check(r.returncode == 0 and len(r.stdout.splitlines()) == 2, "--module-path DIR A B: both dumps walked")
        listing = os.path.join(tmp, "list.txt")
        with open(listing, "w") as f:
            f.write(f"{core}\n\ncores/sig-abort.core\n")
        r = run(stackwalk, ["--from", listing, "--ndjson"] + files, unpacked)
        check(r.returncode == 0 and [json.loads(l)["dump"]["path"] for l in r.stdout.splitlines()]
              == [core, "cores/sig-abort.core"], "--from FILE: one path per line, blank lines skipped")
        empty = subprocess.run([stackwalk, "--from", "-", "--ndjson"], cwd=unpacked, input="", capture_output=True,
                               text=True)
        check(empty.returncode == 0 and not empty.stdout, "--from - with an empty list: exit 0, nothing printed")

        data = open(os.path.join(unpacked, core), "rb").read()
        tiny = os.path.join(tmp, "tiny.core")
        with open(tiny, "wb") as f:
            f.write(data[:100])
        r = run(stackwalk, [tiny], unpacked)
        check(r.returncode == 3 and one_line_error(r) and "truncated" in r.stderr,
              "a core cut inside its program headers: exit 3, says truncated")
        half = os.path.join(tmp, "half.core")
        with open(half, "wb") as f:
            f.write(data[: len(data) // 2])
        r = run(stackwalk, [half, "--json", "-a"] + files, unpacked)
        report = json.loads(r.stdout) if r.returncode == 0 else {}
        check(r.returncode == 0 and any("truncated" in w for w in report.get("warnings", []))
              and all(t["frames"] for t in report["threads"]),
              "a core cut in half: exit 0, a warning, a frame for every thread")
        # The threads whose stacks lie in the missing half are named, and their walks stop there.
        cut = re.search(r"the stacks? of threads? ([\d, ]+) (?:is|are) cut short", " ".join(report.get("warnings", [])))
        named = [int(tid) for tid in cut.group(1).split(", ")] if cut else []
        stops = {t["tid"]: t["stop_detail"] or "" for t in report.get("threads", [])}
        check(named and all("is not in the dump" in stops.get(tid, "") for tid in named),
              f"a core cut in half: the warning names the threads whose stacks it cut ({named}), each one's walk "
              f"stopped by memory not in the dump")

    with tempfile.TemporaryDirectory() as empty_root:
        r = run(stackwalk, [core, "--json", "--sysroot", empty_root], unpacked)
    report = json.loads(r.stdout)
    check(r.returncode == 0 and any("have no file" in w for w in report["warnings"])
          and len(report["threads"]) == 1 and report["threads"][0]["frames"],
          "module files missing: exit 0, a warning, the crashing thread's frames from dump memory")

    r = run(stackwalk, [core, "--json"] + files, unpacked)
    report = json.loads(r.stdout)
    crashed = report["crash"]["thread_id"]
    check([t["tid"] for t in report["threads"]] == [crashed] and report["threads"][0]["crashed"],
          "without a thread option: the crashing thread")
    r = run(stackwalk, ["cores/threads-O0-fp.core", "--json"] + files, unpacked)
    report = json.loads(r.stdout)
    check(report["crash"] is None and len(report["threads"]) == 1, "no crash: the first thread")

    r = run(stackwalk, [core, "--json", "-a"] + files, unpacked)
    tids = [t["tid"] for t in json.loads(r.stdout)["threads"]]
    r = run(stackwalk, [core, "--json", "--thread", str(tids[2]), "--thread", str(tids[1])] + files, unpacked)
    check([t["tid"] for t in json.loads(r.stdout)["threads"]] == [tids[2], tids[1]], "--thread twice, in that order")
    r = run(stackwalk, [core, "--thread", "1"] + files, unpacked)
    check(r.returncode == 2 and r.stderr.strip() == "stackwalk: thread 1 is not in the dump (its threads: "
          + ", ".join(map(str, tids)) + ")", f"--thread of an absent thread: exit 2 naming the threads ({r.stderr.strip()})")
    r = run(stackwalk, [core, "--thread", str(tids[0]), "cores/sig-abort.core", "--ndjson"] + files, unpacked)
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    check(r.returncode == 1 and "threads" in lines[0] and "not in the dump" in lines[1].get("error", {}).get("message", "")
          and lines[1]["error"]["kind"] == "request",
          "--thread in a batch: a dump without that thread gets its error line")

    def debug_file(args):
        report = json.loads(run(stackwalk, ["cores/stripped-debuglink.core", "--json"] + args, unpacked).stdout)
        return next(m["debug_file"] for m in report["modules"] if m["name"] == "stripped-debuglink")
    check(debug_file(files + ["--module-path", "debug"]).startswith("debug/.build-id/"),
          "a separate debug file found by build-id under a module path")
    check(debug_file(files) == "bin/stripped-debuglink.debug", "a separate debug file found by .gnu_debuglink")

    def pdb(args):
        report = json.loads(run(stackwalk, ["dumps/pdb-threads.dmp", "--json"] + args,
                                os.path.join(unpacked, "windows")).stdout)
        module = next(m for m in report["modules"] if m["name"] == "pdb-threads.exe")
        return module["symbols"], module["debug_file"]
    store = pdb(["--module-path", "bin", "--module-path", "symbols"])
    check(store[0] == "pdb" and store[1].startswith("symbols/pdb-threads.pdb/718EF1A62028A0FB4C4C44205044422E1/"),
          f"a PDB found in symbol-store layout ({store[1]})")
    check(pdb(["--module-path", "bin", "--module-path", "symbols-flat"]) == ("pdb", "symbols-flat/pdb-threads.pdb"),
          "a PDB found flat, matched by GUID and age")
    check_pdb_without_image(stackwalk, os.path.join(unpacked, "windows"))
    check_crash_record_lost(stackwalk, os.path.join(unpacked, "windows", "dumps", "crash-av.dmp"))

    with tempfile.TemporaryDirectory() as tmp:
        perf_map = os.path.join(tmp, "perf.map")
        with open(perf_map, "w") as f:
            f.write("0 10 jit_target\nnot a line\n")
        r = run(stackwalk, ["cores/crash-callnull.core", "--json", "--perf-map", perf_map] + files, unpacked)
        report = json.loads(r.stdout)
        frame0 = report["threads"][0]["frames"][0]
        check(frame0["function"] == "jit_target" and frame0["module"] is None
              and any("1 malformed line" in w for w in report["warnings"]),
              "--perf-map names a frame outside every module; a malformed line is a warning")

    report = json.loads(run(stackwalk, ["cores/jit-gdb.core", "--json", "-a"] + files, unpacked).stdout)
    jit = [f for t in report["threads"] for f in t["frames"] if f["module"] and f["module"].startswith("jit@")]
    check(len(jit) == 6 and {f["function"] for f in jit} == {"jit_dispatch", "jit_middle", "jit_entry"}
          and all(f["file"] and f["line"] for f in jit)
          and any(m["path"] == "[jit]" and m["file"] is None for m in report["modules"]),
          "GDB JIT interface: code registered at run time is a module with names and file:line")
    trusts = [f["trust"] for t in report["threads"] for f in t["frames"] if f["function"] in ("jit_middle", "jit_entry")]
    check(trusts and set(trusts) == {"dynamic"}, "frames unwound by JIT-registered CFI have trust dynamic")

    r = run(stackwalk, [core, "--json", "--max-debug-bytes", "1000"] + files, unpacked)
    report = json.loads(r.stdout)
    libc = [f for f in report["threads"][0]["frames"] if f["module"] == "libc.so.6"]
    symbols = next(m["symbols"] for m in report["modules"] if m["name"] == "libc.so.6")
    check(libc and all(f["function"] and not f["file"] for f in libc) and not any(f["inlined"] for f in libc)
          and symbols == "symtab",
          f"--max-debug-bytes below libc's DWARF: libc frames named by its symbol table, without lines (symbols: {symbols})")

    r = run(stackwalk, [core, "--json", "-a", "--max-threads", "2"] + files, unpacked)
    report = json.loads(r.stdout)
    check(len(report["threads"]) == 2 and any("only the first 2 of 3 threads" in w for w in report["warnings"]),
          "--max-threads: the first threads only, with a warning")

    r = run(stackwalk, [core, "--json", "--max-frames", "2"] + files, unpacked)
    thread = json.loads(r.stdout)["threads"][0]
    physical = [f for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]
    check(len(physical) == 2 and thread["stop_reason"] == "max_frames", "--max-frames 2")

    r = run(stackwalk, [core, "--json", "--raw-context", "--registers"] + files, unpacked)
    frame0 = json.loads(r.stdout)["threads"][0]["frames"][0]
    raw = bytes.fromhex(frame0["raw_context"])
    flags = int.from_bytes(raw[0x30:0x34], "little")
    rip = int.from_bytes(raw[0xF8:0x100], "little")
    check(len(raw) == 0x4D0 and flags & 0x100003 == 0x100003 and rip == int(frame0["ip"], 16)
          and frame0["registers"]["rip"] == frame0["ip"],
          "--raw-context: a 0x4d0-byte AMD64 CONTEXT with CONTROL|INTEGER and rip")
    frame1 = next(f for f in json.loads(r.stdout)["threads"][0]["frames"][1:] if not f["inlined"] and not f["tail_call"])
    check("rax" not in frame1["registers"] and "rbx" in frame1["registers"],
          "a caller frame: caller-saved registers unknown, callee-saved known")

    with tempfile.TemporaryDirectory() as tmp:
        # Without NT_FILE the modules come from the dynamic linker's r_debug
        # link map: the walk must not change.
        patched = os.path.join(tmp, "no-nt-file.core")
        with open(patched, "wb") as f:
            f.write(without_nt_file(open(os.path.join(unpacked, core), "rb").read()))
        r = run(stackwalk, [patched, "--json", "-a"] + files, unpacked)
        bad_name = os.path.join(tmp, "bad-name.core")
        with open(bad_name, "wb") as f:
            f.write(patch_note(open(os.path.join(unpacked, core), "rb").read(), 3, 40, b"\xff\xfe\x80name"))
        r2 = run(stackwalk, [bad_name, "--json"] + files, unpacked)
        check(r2.returncode == 0 and json.loads(r2.stdout)["dump"]["process_name"].startswith("\ufffd\ufffd\ufffdname"),
              "a process name that is not UTF-8: valid JSON, the bytes replaced")
        report = json.loads(r.stdout)
        normal = json.loads(run(stackwalk, [core, "--json", "-a"] + files, unpacked).stdout)
        ips = lambda rep: [[f["ip"], f["function"]] for t in rep["threads"] for f in t["frames"]]
        check(r.returncode == 0 and any("link map" in w for w in report["warnings"])
              and {m["name"] for m in report["modules"]} == {m["name"] for m in normal["modules"]}
              and ips(report) == ips(normal),
              "no NT_FILE note: the same modules from the link map, the same frames")

    check_colour(stackwalk, unpacked, [core] + files)
    check_verbose(stackwalk, unpacked, [core, "-a"] + files)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
