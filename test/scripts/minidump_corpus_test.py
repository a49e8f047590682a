#!/usr/bin/env python3
"""The minidumps of ../shared/corpus, against what their projects expect
(../shared/corpus/README.md).

Usage: minidump_corpus_test.py STACKWALK
"""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

import dumps

CORPUS = os.path.join(dumps.SHARED, "corpus", "minidump")
check = dumps.Checks()


def run(stackwalk, dump, *args):
    return subprocess.run([stackwalk, os.path.join(CORPUS, dump), "-a", "--json", *args],
                          capture_output=True, text=True, timeout=60)


def report(stackwalk, dump, *args):
    result = run(stackwalk, dump, *args)
    if result.returncode != 0:
        raise RuntimeError(f"{dump}: exit {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def physical(thread):
    return [f for f in thread["frames"] if not f["inlined"] and not f["tail_call"]]


def base_name(name):
    return re.sub(r"\(.*\)$", "", name or "")


def memory_list(path):
    """(start, bytes) of each MemoryList range of a minidump."""
    data = open(path, "rb").read()
    count, rva = struct.unpack_from("<II", data, 8)
    ranges = []
    for i in range(count):
        kind, size, at = struct.unpack_from("<III", data, rva + 12 * i)
        if kind == 5:  # MemoryList
            n, = struct.unpack_from("<I", data, at)
            for j in range(n):
                start, length, where = struct.unpack_from("<QII", data, at + 4 + 16 * j)
                ranges.append((start, data[where:where + length]))
    return ranges


def bytes_before(ranges, address, n):
    for start, blob in ranges:
        if start <= address - n and address <= start + len(blob):
            return blob[address - n - start: address - start]
    return None


def lldb_linux(stackwalk):
    """TestMiniDumpNew.py: crash(), then _start, given the executable."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(CORPUS, "lldb", "linux-x86_64"), tmp)
        r = report(stackwalk, "lldb/linux-x86_64.dmp", "--module-path", tmp)
    thread = next(t for t in r["threads"] if t["crashed"])
    names = [base_name(f["function"]) for f in physical(thread)]
    check(names == ["crash", "_start"], f"lldb linux-x86_64.dmp: crash, _start (got {names})")


def rust_linux_mini(stackwalk):
    """linux-mini.dmp has no module files. rust-minidump's snapshot scans up 13
    frames above the context; stackwalk keeps those the dump supports: the
    frame-pointer chain (main's rbp leads to __libc_start_main) and scanned
    return addresses whose preceding bytes in the dump are a call. The others
    are rejected because no call can be shown before them: either the dump
    holds those bytes and they are not a call (refuted), or it does not hold
    the code at all (unproven); `crash + 0x3f` is an address in the ELF
    header, not code."""
    r = report(stackwalk, "rust-minidump/linux-mini.dmp")
    snapshot = open(os.path.join(CORPUS, "rust-minidump", "snapshots", "linux_json_pretty.snap")).read()
    theirs = json.loads(snapshot.split("---", 2)[2])
    their_thread = theirs["threads"][theirs["crash_info"]["crashing_thread"]]
    # rust-minidump's "offset" of a caller frame is its return address minus 1.
    their_ips = [int(f["offset"], 16) + (0 if f["trust"] == "context" else 1) for f in their_thread["frames"]]
    ours = next(t for t in r["threads"] if t["crashed"])
    our_ips = [int(f["ip"], 16) for f in physical(ours)]
    check(all(ip in their_ips for ip in our_ips), "linux-mini.dmp: every frame stackwalk prints is one rust-minidump found")
    check(len(our_ips) < len(their_ips), f"linux-mini.dmp: fewer frames ({len(our_ips)} of {len(their_ips)})")
    check([f["trust"] for f in physical(ours)][0] == "context"
          and all(f["trust"] in ("frame_pointer", "scan") for f in physical(ours)[1:]),
          "linux-mini.dmp: frames past the context are marked frame_pointer or scan")
    check(any("have no file" in w for w in r["warnings"]), "linux-mini.dmp: the report says module files are missing")
    ranges = memory_list(os.path.join(CORPUS, "rust-minidump", "linux-mini.dmp"))
    refuted, unproven, wrongly = [], [], []
    for ip in their_ips[1:]:
        if ip in our_ips:
            continue
        before = bytes_before(ranges, ip, 7)
        if before is None:
            unproven.append(ip)
            continue
        refuted.append(ip)
        call = before[2] == 0xE8 or any(before[-n] == 0xFF and (before[-n + 1] >> 3) & 7 == 2 for n in range(2, 8))
        if call:
            wrongly.append(ip)
    check(not wrongly, f"linux-mini.dmp: {len(refuted)} rejected candidates have code in the dump and no call before them"
                       + (f" (but {[hex(i) for i in wrongly]} do)" if wrongly else ""))
    print(f"     linux-mini.dmp: rejected {len(refuted)} refuted by the dump, {len(unproven)} without code in the dump")
    check(0x400040 not in our_ips, "linux-mini.dmp: `crash + 0x3f` (an ELF header address) is not a frame")


def windows_dumps(stackwalk):
    r = report(stackwalk, "rust-minidump/invalid-parameter.dmp")
    check(len(r["threads"]) > 0 and len(r["modules"]) > 0, "invalid-parameter.dmp loads with threads and modules")
    for thread in r["threads"]:
        if any(f["trust"] not in ("context", "scan") for f in thread["frames"]):
            check(False, "invalid-parameter.dmp: without module files, frames are the context or marked scan")
    # The interrupted pc's copies on the stack (the saved exception record and context) are
    # no caller: the scan once took one for frame #1, repeating frame #0's ip.
    crashed = next(t for t in r["threads"] if t["crashed"])
    ips = [f["ip"] for f in crashed["frames"]]
    check(ips.count(crashed["frames"][0]["ip"]) == 1,
          f"invalid-parameter.dmp: no scanned frame repeats the crash's exact ip ({ips})")
    r = report(stackwalk, "breakpad/tiny-exe-fastfail.dmp")
    crashed = next(t for t in r["threads"] if t["crashed"])
    check(r["crash"]["exception_code"] == "0x00000000c0000409" and crashed["frames"][0]["trust"] == "context"
          and r["crash"]["code_name"] == "FAST_FAIL_FATAL_APP_EXIT",
          "tiny-exe-fastfail.dmp: the fast-fail exception, its sub-code FAST_FAIL_FATAL_APP_EXIT (as Breakpad's "
          "minidump_processor_unittest asserts) and the crashing thread's context")
    r = report(stackwalk, "rust-minidump/invalid-parameter.dmp")
    check(r["crash"]["name"] == "STATUS_INVALID_PARAMETER", "invalid-parameter.dmp: STATUS_INVALID_PARAMETER")
    r = report(stackwalk, "rust-minidump/test.dmp")
    crashed = next(t for t in r["threads"] if t["crashed"])
    check(r["dump"]["arch"] == "x86" and [f["module_offset"] for f in crashed["frames"]] ==
          ["0x429e", "0x4200", "0x53ec", "0x16fd7"] and crashed["frames"][1]["trust"] == "frame_pointer",
          "test.dmp (x86) without symbols: the four frames rust-minidump finds, by the ebp chain "
          "(windows_x86_test.py compares every x86 dump with Breakpad's walker)")
    check(r["crash"]["name"] == "EXCEPTION_ACCESS_VIOLATION" and r["crash"]["address"] == "0x0000000000000045",
          "test.dmp: the access violation at 0x45, as rust-minidump and Breakpad report it")


def streams(data):
    """{stream type: (offset, size)} of a minidump."""
    count, directory = struct.unpack_from("<II", data, 8)
    return {t: (rva, size) for t, size, rva in (struct.unpack_from("<III", data, directory + 12 * i)
                                                 for i in range(count))}


def module_names(data):
    """The ModuleList's file names, in the dump's order."""
    offset, _ = streams(data)[4]
    names = []
    for i in range(struct.unpack_from("<I", data, offset)[0]):
        name_rva, = struct.unpack_from("<I", data, offset + 4 + 108 * i + 20)
        length, = struct.unpack_from("<I", data, name_rva)
        names.append(re.split(r"[/\\]", data[name_rva + 4: name_rva + 4 + length].decode("utf-16-le"))[-1])
    return names


def module_codeview(data, name):
    """The offset of a module's CodeView record (RSDS, GUID, age, name) in a minidump."""
    offset, _ = streams(data)[4]  # ModuleListStream
    for i in range(struct.unpack_from("<I", data, offset)[0]):
        entry = offset + 4 + 108 * i
        name_rva, = struct.unpack_from("<I", data, entry + 20)
        length, = struct.unpack_from("<I", data, name_rva)
        if data[name_rva + 4: name_rva + 4 + length].decode("utf-16-le").endswith("/" + name):
            return struct.unpack_from("<I", data, entry + 80)[0]
    raise KeyError(name)


def breakpad_linux(stackwalk):
    """Breakpad's Linux dumps: module identity from the CodeView GUID Breakpad derives from each
    file, crash reasons."""
    r = report(stackwalk, "breakpad/linux_stacksmash.dmp")
    gcc = next(m for m in r["modules"] if m["name"] == "libgcc_s.so.1")
    check(gcc["file"] is None and "__truncdfhf2" not in (r["signature"] or ""),
          f"linux_stacksmash.dmp: no 2013 libgcc_s.so.1 here, so no name from another build ({gcc['note']})")
    unchecked = [f"{os.path.basename(d)}: {m['name']}" for d in sorted(os.listdir(os.path.join(CORPUS, "breakpad")))
                 if d.startswith("linux_") and d.endswith(".dmp")
                 for m in report(stackwalk, "breakpad/" + d)["modules"]
                 if m["file"] and (m["note"] or "").startswith("identity not checked")]
    check(not unchecked, "Breakpad's Linux dumps: no module file used without its identity checked"
          + (f" ({', '.join(unchecked)})" if unchecked else ""))
    host = "/lib/x86_64-linux-gnu/libgcc_s.so.1"
    readelf = shutil.which("llvm-readelf-19") or shutil.which("llvm-readelf")
    if os.path.exists(host) and readelf:
        # The dump made to record this machine's libgcc_s: its build-id (llvm-readelf's) as
        # the GUID Breakpad would write. Then the file is used, its identity checked.
        build_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run([readelf, "--notes", host], capture_output=True,
                                                                      text=True).stdout).group(1)
        data = bytearray(open(os.path.join(CORPUS, "breakpad/linux_stacksmash.dmp"), "rb").read())
        record = module_codeview(data, "libgcc_s.so.1")
        data[record + 4: record + 20] = bytes.fromhex(build_id)[:16].ljust(16, b"\0")
        with tempfile.TemporaryDirectory() as tmp:
            patched = os.path.join(tmp, "stacksmash-here.dmp")
            with open(patched, "wb") as f:
                f.write(data)
            gcc = next(m for m in report(stackwalk, patched)["modules"] if m["name"] == "libgcc_s.so.1")
        check(gcc["file"] == host and gcc["note"] is None,
              f"a CodeView GUID equal to a file's build-id: the file is used, identity checked ({gcc['note']})")
        # No CodeView record at all: the file is used unchecked, named in frames but not in
        # the signature, unless --trust-unchecked-files.
        data[record: record + 4] = b"\0\0\0\0"
        with tempfile.TemporaryDirectory() as tmp:
            patched = os.path.join(tmp, "stacksmash-no-id.dmp")
            with open(patched, "wb") as f:
                f.write(data)
            plain, trusting = report(stackwalk, patched), report(stackwalk, patched, "--trust-unchecked-files")
        gcc = next(m for m in plain["modules"] if m["name"] == "libgcc_s.so.1")
        frame0 = next(t for t in plain["threads"] if t["crashed"])["frames"][0]
        check(gcc["file"] == host and gcc["note"].startswith("identity not checked") and frame0["function"]
              and plain["signature"].startswith("libgcc_s.so.1+0x")
              and trusting["signature"].startswith("libgcc_s.so.1!" + frame0["function"]),
              "a dump with no identity for a file: used and noted, its names kept out of the signature unless "
              f"--trust-unchecked-files ({plain['signature']} / {trusting['signature']})")
    r = report(stackwalk, "breakpad/minidump_32bit_crash_addr.dmp")
    check(r["crash"]["address"] == "0x0000000000000045", "minidump_32bit_crash_addr.dmp: the 32-bit address 0x45, "
          f"not sign-extended ({r['crash']['address']})")
    r = report(stackwalk, "breakpad/linux_raise_sigabrt.dmp")
    check(r["crash"]["sender_pid"] == r["dump"]["pid"] and r["crash"]["address"] is None,
          "linux_raise_sigabrt.dmp: raise() sent the signal, from the process's own pid; no fault address")
    data = bytearray(open(os.path.join(CORPUS, "breakpad/linux_raise_sigabrt.dmp"), "rb").read())
    exception, _ = streams(data)[6]  # ExceptionStream: ThreadId, alignment, then ExceptionCode
    for code, what in ((0xFFFFFFFF, "a dump requested without a crash"), (0, "signal 0"),
                       (19, "the SIGSTOP of a debugger that attached")):
        struct.pack_into("<I", data, exception + 8, code)
        with tempfile.TemporaryDirectory() as tmp:
            patched = os.path.join(tmp, "no-crash.dmp")
            with open(patched, "wb") as f:
                f.write(data)
            r = report(stackwalk, patched)
        check(r["crash"] is None and r["signature"] is None, f"{what} is no crash: crash and signature null")


def macos(stackwalk):
    """rust-minidump's macOS dump (Breakpad's ContextFlags without sub-flags), against its
    snapshot (test_minidump_stackwalk__macos_inlines_human.snap)."""
    r = report(stackwalk, "rust-minidump/pipeline-inlines-macos-segv.dmp", "--registers")
    crash = r["crash"]
    check(r["dump"]["os"] == "macos" and r["dump"]["os_version"] == "11.6.7 20G630",
          f"macos-segv: Mac OS X 11.6.7 20G630 ({r['dump']['os']} {r['dump']['os_version']})")
    check((crash["name"], crash["code_name"], crash["address"]) ==
          ("EXC_BAD_ACCESS", "KERN_INVALID_ADDRESS", "0xffffffff80000042"),
          f"macos-segv: EXC_BAD_ACCESS / KERN_INVALID_ADDRESS at 0xffffffff80000042 ({crash})")
    frame = next(t for t in r["threads"] if t["crashed"])["frames"][0]
    check(frame["ip"] == "0x0000000102a68cd4" and frame["registers"]["rbp"] == "0x00007ffeed1aa9b0"
          and frame["registers"]["r15"] == "0x0000000200000000",
          "macos-segv: the crashing thread's context (ContextFlags 0x00100000 alone) gives rip, rbp, r15 as the "
          "snapshot has them")
    r = report(stackwalk, "breakpad/minidump_crashpad_annotation.dmp")
    check(r["dump"]["os"] == "ios" and r["crash"]["name"] == "Crashpad simulated crash",
          "minidump_crashpad_annotation.dmp: iOS, Crashpad's simulated crash")


def annotations(stackwalk):
    """What writers attach, against rust-minidump's test_minidump.rs: Crashpad's module
    annotations (simple-crashpad.dmp) and Breakpad's assertion stream (invalid-parameter.dmp)."""
    r = report(stackwalk, "rust-minidump/simple-crashpad.dmp")
    sixteenth = module_names(open(os.path.join(CORPUS, "rust-minidump/simple-crashpad.dmp"), "rb").read())[16]
    annotated = {m["name"]: m["list_annotations"] for m in r["modules"] if m.get("list_annotations")}
    crashpad = r["dump"]["annotations"]
    check(len(annotated) == 2 and annotated.get(sixteenth) == ["abort() called"] and crashpad.get("hello") == "world"
          and crashpad.get("crashpad.report_id", "").startswith("72def942"),
          f"simple-crashpad.dmp: module 16 ({sixteenth})'s list annotation 'abort() called', 2 annotated modules, "
          f"the simple annotation hello=world ({annotated})")
    assertion = report(stackwalk, "rust-minidump/invalid-parameter.dmp")["crash"].get("assertion")
    check(assertion == {"expression": "format != nullptr", "function": "common_vfprintf",
                        "file": "minkernel\\crts\\ucrt\\src\\appcrt\\stdio\\output.cpp", "line": 32,
                        "kind": "invalid_parameter"},
          f"invalid-parameter.dmp: the assertion stream as rust-minidump reads it ({assertion})")


def malformed(stackwalk):
    for dump in ("rust-minidump/invalid-range.dmp", "rust-minidump/invalid-record-count.dmp"):
        result = run(stackwalk, dump)
        lines = result.stderr.strip().splitlines()
        check(result.returncode == 0 or (result.returncode == 3 and len(lines) == 1 and lines[0].startswith("stackwalk: ")),
              f"{os.path.basename(dump)}: a clear error or a partial report")
    r = report(stackwalk, "breakpad/linux_inline.dmp")
    check(r["crash"]["name"] == "SIGILL" and r["threads"], "linux_inline.dmp (Crashpad) loads: SIGILL, threads")


def breakpad_out_frames(path):
    """Thread 0's frames in a minidump_stackwalk .out file: (module, function) and the
    module offset of the address it names (a caller's is its return address - 4 on arm64)."""
    frames = []
    for line in open(path):
        m = re.match(r"\s*(\d+)\s+(\S+?)(?:!(.+?) \[.*\]| \+ (0x[0-9a-f]+))\s*$", line)
        if m:
            frames.append((m.group(2), m.group(3)))
        elif line.startswith("Thread 1"):
            break
    return frames


def microdumps(stackwalk):
    """Breakpad's microdumps (Android's logcat text): the arm64 one with its symbols/microdump
    walked to the frames of microdump.stackwalk-arm64.out by their STACK CFI, and without
    symbols to the same addresses; the ARM one to microdump.stackwalk-arm.out's; the mips one
    refused naming its architecture, the x86 one read (its context frame: Breakpad's 17 come
    from a scan that takes any word in a module, and the microdump holds no code to show a
    call before one)."""
    symbols = os.path.join(CORPUS, "breakpad", "symbols", "microdump")
    r = report(stackwalk, "breakpad/microdump-arm64.dmp", "--symbols-path", symbols)
    check(r["dump"]["format"] == "microdump" and r["dump"]["arch"] == "arm64" and len(r["modules"]) == 8
          and r["dump"]["os_version"] == "OS 64 VERSION INFO",
          "microdump-arm64.dmp: a microdump of arm64, 8 modules, its OS version (microdump_processor_unittest.cc)")
    thread = r["threads"][0]
    ours = [(f["module"], base_name(f["function"]) if f["function"] else None) for f in physical(thread)]
    theirs = breakpad_out_frames(os.path.join(CORPUS, "breakpad", "microdump.stackwalk-arm64.out"))
    check(ours == theirs, f"microdump-arm64.dmp with symbols: the {len(theirs)} frames of "
          f"microdump.stackwalk-arm64.out" + ("" if ours == theirs else f" (got {ours})"))
    check(all(f["trust"] == "cfi" for f in physical(thread)[1:]), "microdump-arm64.dmp: callers found by STACK CFI")
    bare = report(stackwalk, "breakpad/microdump-arm64.dmp")
    ips = [f["ip"] for f in physical(thread)]
    check([f["ip"] for f in physical(bare["threads"][0])][:len(ips)] == ips,
          f"microdump-arm64.dmp without symbols: the same {len(ips)} frames first (by frame records)")
    arm = report(stackwalk, "breakpad/microdump-arm.dmp", "--symbols-path", symbols)
    ours = [(f["module"], base_name(f["function"]) if f["function"] else None) for f in physical(arm["threads"][0])]
    theirs = breakpad_out_frames(os.path.join(CORPUS, "breakpad", "microdump.stackwalk-arm.out"))
    check(arm["dump"]["arch"] == "arm" and ours == theirs,
          f"microdump-arm.dmp with symbols: the {len(theirs)} frames of microdump.stackwalk-arm.out, by STACK CFI"
          + ("" if ours == theirs else f" (got {ours})"))
    # Without symbols nothing unwinds its context (the writer's own, lr = pc, both with
    # the Thumb bit), which once gave a second frame at the same code from lr.
    truth = [int(f["ip"], 16) & ~1 for f in physical(arm["threads"][0])]
    bare = [int(f["ip"], 16) & ~1 for f in physical(report(stackwalk, "breakpad/microdump-arm.dmp")["threads"][0])]
    check(bare == truth[:len(bare)], f"microdump-arm.dmp without symbols: {len(bare)} frame(s), the first of those "
                                     f"with symbols" + ("" if bare == truth[:len(bare)] else f" (got {bare})"))
    reason = report(stackwalk, "breakpad/microdump-withcrashreason.dmp")
    check(reason["crash"]["name"] == "SIGTRAP" and reason["crash"]["address"] == "0x000000004a7cb000",
          "microdump-withcrashreason.dmp: SIGTRAP at 0x4a7cb000 (microdump_processor_unittest.cc)")
    multiple = report(stackwalk, "breakpad/microdump-multiple.dmp")
    check(multiple["dump"]["arch"] == "arm" and len(multiple["modules"]) == 156
          and multiple["dump"]["os_version"] == "lge/p1_tmo_us/p1:6.0/MRA58K/1603210524c8d:user/release-keys",
          "microdump-multiple.dmp: arm, 156 modules, its OS version (microdump_processor_unittest.cc)")
    result = run(stackwalk, "breakpad/microdump-mips32.dmp")
    check(result.returncode == 3 and "a microdump of architecture 'mips'" in result.stderr,
          f"microdump-mips32.dmp: refused, naming its architecture ({result.stderr.strip()})")
    x86 = report(stackwalk, "breakpad/microdump-x86.dmp")
    check(x86["dump"]["arch"] == "x86" and len(x86["modules"]) == 124 and len(x86["threads"][0]["frames"]) == 1,
          "microdump-x86.dmp: read, 124 modules (microdump_processor_unittest.cc), its context frame")


def symbol_store(tmp, module, debug_id, sym_path, name=None):
    """A Breakpad store in tmp holding one .sym file for module/debug_id."""
    folder = os.path.join(tmp, module, debug_id)
    os.makedirs(folder, exist_ok=True)
    shutil.copy(sym_path, os.path.join(folder, name or module + ".sym"))
    return tmp


def entries(thread):
    """(function, file, line, inlined) of every entry, innermost first."""
    return [(f["function"], f["file"], f["line"], f["inlined"]) for f in thread["frames"]]


def symbol_files(stackwalk):
    """Breakpad .sym files: linux_inline.dmp's, as basic_source_line_resolver_unittest.cc resolves
    0x161b6 with each form of INLINE record; rust-minidump's macOS dump with its symbols/, against
    test_minidump_stackwalk__macos_inlines_json_pretty.snap; and a file whose MODULE record names
    another debug id, rejected."""
    syms = os.path.join(CORPUS, "breakpad", "symbols", "linux_inline", "BBA6FA10B8AAB33D00000000000000000")
    expected = {
        "new": [("func()", "linux_inline.cpp", 27, True), ("bar()", "c.cpp", 32, True), ("foo()", "b.cpp", 39, True),
                ("main", "a.cpp", 42, False)],
        # The older form records no call site's file.
        "old": [("func()", "linux_inline.cpp", 27, True), ("bar()", "linux_inline.cpp", 32, True),
                ("foo()", "linux_inline.cpp", 39, True), ("main", "linux_inline.cpp", 42, False)],
    }
    for form, want in expected.items():
        with tempfile.TemporaryDirectory() as tmp:
            store = symbol_store(tmp, "linux_inline", "BBA6FA10B8AAB33D00000000000000000",
                                 os.path.join(syms, f"linux_inline.{form}.sym"))
            r = report(stackwalk, "breakpad/linux_inline.dmp", "--symbols-path", store)
        thread = next(t for t in r["threads"] if t["crashed"])
        got = entries(thread)[:4]
        check(got == want, f"linux_inline.dmp with the {form} INLINE form: {want} (got {got})")
        module = next(m for m in r["modules"] if m["name"] == "linux_inline")
        check(module["symbols"] == "breakpad" and module["symbol_file"].endswith("linux_inline.sym"),
              f"linux_inline.dmp ({form}): the module names its symbol file")
        check(thread["frames"][3]["function_offset"] == "0x686", "linux_inline.dmp: main+0x686 (0x161b6 - 0x15b30)")

    snapshot = open(os.path.join(CORPUS, "rust-minidump", "snapshots",
                                 "test_minidump_stackwalk__macos_inlines_json_pretty.snap")).read()
    theirs = json.loads(snapshot.split("---", 2)[2])
    their_thread = theirs["threads"][theirs["crash_info"]["crashing_thread"]]
    # Their last frame repeats the one before it, found again by their scan: not a frame.
    their_frames = [f for f in their_thread["frames"] if f["trust"] != "scan"]
    want = []
    for f in their_frames:
        want += [(i["function"], i["file"], i["line"], True) for i in f["inlines"] or []]
        want.append((f["function"], f["file"], f["line"], False))
    r = report(stackwalk, "rust-minidump/pipeline-inlines-macos-segv.dmp", "--symbols-path",
               os.path.join(CORPUS, "rust-minidump", "symbols"))
    ours = next(t for t in r["threads"] if t["crashed"])
    # Frames in libdyld have no symbol file: rust-minidump names them null, as we do.
    got = entries(ours)
    check(got == want, f"macos-segv with symbols/: {len(want)} entries as rust-minidump's snapshot "
                       f"(first difference: {next((p for p in zip(got, want) if p[0] != p[1]), len(got))})")
    their_ips = [int(f["offset"], 16) + (0 if f["trust"] == "context" else 1) for f in their_frames]
    check([int(f["ip"], 16) for f in physical(ours)] == their_ips
          and [f["trust"] for f in physical(ours)] == [f["trust"] for f in their_frames],
          "macos-segv with symbols/: the same physical frames, found the same way (context, then cfi)")

    with tempfile.TemporaryDirectory() as tmp:
        store = symbol_store(tmp, "crash-client", "509C0610949836F7B70BD88BCF03E5400",
                             os.path.join(syms, "linux_inline.new.sym"))
        r = report(stackwalk, "rust-minidump/pipeline-inlines-macos-segv.dmp", "--symbols-path", store)
    module = next(m for m in r["modules"] if m["name"] == "crash-client")
    check(module["symbol_file"] is None and "its debug id is BBA6FA10" in (module["note"] or "")
          and next(t for t in r["threads"] if t["crashed"])["frames"][0]["function"] is None,
          "a symbol file whose MODULE record names another debug id is rejected, with a note")


def without_files(stackwalk):
    """minidump_crashpad_annotation.dmp (iOS simulator, Crashpad) has no memory-info stream and no
    module files: the modules' extents count as code and its rbp chain is followed. Breakpad's
    minidump_stackwalk (npm minidump 0.26.0) finds the same 26 callers by the frame pointer, the
    last dyld + 0x6310, then two by scanning words whose call bytes the dump does not hold,
    which stackwalk does not accept."""
    r = report(stackwalk, "breakpad/minidump_crashpad_annotation.dmp")
    thread = next(t for t in r["threads"] if t["crashed"])
    frames = physical(thread)
    last = frames[-1]
    check(len(frames) == 27 and all(f["trust"] == "frame_pointer" for f in frames[1:])
          and (last["module"], last["ip"]) == ("dyld", "0x0000000104ff3310"),
          f"minidump_crashpad_annotation.dmp: 26 callers by the frame pointer, the last dyld+0x6310 "
          f"({len(frames)} frames, the last {last['module']} {last['ip']})")
    check(thread["stop_reason"] == "no_unwind_info", "minidump_crashpad_annotation.dmp: the walk ends for want of "
                                                     f"unwind info, not at the stack's end ({thread['stop_reason']})")


def entry_point(path):
    """AT_ENTRY from a minidump's LinuxAuxv stream (64-bit words), or None."""
    data = open(path, "rb").read()
    offset, size = streams(data).get(0x47670008, (0, 0))
    pairs = struct.unpack_from(f"<{size // 8}Q", data, offset)
    return dict(zip(pairs[::2], pairs[1::2])).get(9)


def to_entry_function(stackwalk):
    """Breakpad's Linux dumps of its test programs (driver, driver1-5: exploitability_unittest.cc's),
    walked with no file and no symbols: the dumps hold the stacks, the auxiliary vector, and
    no code but, in some, the executable's first pages. Each crashing thread must end at
    _start's call of __libc_start_main, a word 0x29 bytes past the entry point the auxiliary
    vector gives, above __libc_start_main's frame (found by main's frame record), and no frame
    may be the entry point itself: a register __libc_start_main saved holds it, and in
    linux_inside_module_exe_region1/2.dmp the code before it ends with a call to
    __assert_fail. Breakpad's minidump_stackwalk (npm minidump 0.26.0) walks each of these 11
    frames deep: these 4 and 7 more, which in linux_divide_by_zero.dmp and
    linux_inside_module_exe_region1.dmp are the entry point's address (three times),
    main's and __libc_csu_init's (the addresses _start passes), and returns of calls that
    ended before main's (stale)."""
    folder = os.path.join(CORPUS, "breakpad")
    names = sorted(d for d in os.listdir(folder) if d.startswith("linux_") and d.endswith(".dmp"))
    ended, wrong = 0, []
    for name in names:
        r = report(stackwalk, "breakpad/" + name, "--no-host-files")
        if not r["dump"]["process_name"].startswith("driver"):
            continue
        entry = entry_point(os.path.join(folder, name))
        frames = physical(next(t for t in r["threads"] if t["crashed"]))
        ips = [int(f["ip"], 16) for f in frames]
        if entry is None or entry in ips or not 0 < ips[-1] - entry <= 64:
            wrong.append(f"{name}: {[hex(ip) for ip in ips]}, entry point {entry and hex(entry)}")
        ended += 1
    check(ended >= 18 and not wrong,
          f"Breakpad's Linux dumps of driver without files: {ended} crashing threads end at _start's call, "
          f"none at the entry point" + (f" (not: {wrong})" if wrong else ""))


def symbols_to_start(stackwalk):
    """Breakpad's linux_null_read_av.dmp and linux_overflow.dmp with their symbols/: the crashing
    thread ends, as Breakpad's does, at the executable's _start; a word on the stack holding
    ld-2.13.so's load address (whose .sym has only PUBLIC records) is no frame."""
    symbols = os.path.join(CORPUS, "breakpad", "symbols")
    for name, program in (("linux_null_read_av.dmp", "null_read_av"), ("linux_overflow.dmp", "overflow")):
        thread = next(t for t in report(stackwalk, f"breakpad/{name}", "--symbols-path", symbols)["threads"]
                      if t["crashed"])
        frames = physical(thread)
        check(frames[-1]["module"] == program and all(f["module"] for f in frames),
              f"{name} with its symbols: the walk ends at {program}'s _start, no frame outside a module "
              f"({[(f['module'], f['ip']) for f in frames[-2:]]})")


# What the corpus's projects expect that stackwalk does not do yet, and why (issue 21); printed
# by the test, each to become a check when it is met.
NOT_MET = [
    "Windows x64 dumps without their images (tiny-exe-fastfail, write_av_non_canonical, invalid-parameter): "
    "1 frame; minidump_stackwalk scans on without code bytes, where stackwalk asks for a call instruction "
    "or a symbol file's function before taking a word (on the project's Windows dumps walked so, "
    "breakpad_symbols_test counts Breakpad's frames against winedbg's: most are false); with their images "
    "from a symbol server (not reachable here: Microsoft's), they walk by .pdata (symbol_server_test)",
    "a stale return address (a call that has returned, its code in the dump) is taken by the scan where "
    "nothing describes the frames: breakpad_symbols_test lists one on the project's Windows dumps without images",
]


def main(stackwalk, options):
    if not os.path.isdir(CORPUS):
        dumps.skip(f"{CORPUS} is absent")
    lldb_linux(stackwalk)
    rust_linux_mini(stackwalk)
    windows_dumps(stackwalk)
    breakpad_linux(stackwalk)
    macos(stackwalk)
    annotations(stackwalk)
    malformed(stackwalk)
    symbol_files(stackwalk)
    without_files(stackwalk)
    to_entry_function(stackwalk)
    symbols_to_start(stackwalk)
    microdumps(stackwalk)
    for item in NOT_MET:
        print(f"not met yet: {item}")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
