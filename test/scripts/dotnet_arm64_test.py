#!/usr/bin/env python3
""".NET on arm64 (issue 22): test/dumps/dotnet/program published for linux-arm64 and run under
qemu-aarch64, its cores walked against the program's own record.

Usage: dotnet_arm64_test.py STACKWALK

The program is published self-contained for linux-arm64 (the runtime pack from NuGet),
once per source: the build tree keeps it (dotnet-arm64/, keyed by the sources' SHA-256).
createdump cannot run under qemu, so qemu writes the cores: `park` once it is READY is sent
SIGSEGV (kill_with_core), `crash` dies of its unhandled exception, and `nullref` of the
NullReferenceException of a fault at a tier-1 method's first instruction. Each core is
walked mixed and --managed-only with -e, and checked as dotnet_fresh_test.py checks the
x86-64 dumps (dotnet_checks.py): every scenario's methods in the program's order, its
runtime Frames among them (InlinedCallFrame, SoftwareExceptionFrame,
DebuggerU2MCatchHandlerFrame), the recorded MethodDescs, every managed frame named with a
MethodDesc, the scenario's last thrown exception; the crashes' crashing thread (the one that
threw) and exception.
Managed callers must be found by the runtime's unwind data (trust unwind_info: Windows
ARM64 unwind codes), not by frame pointers.

Skips (77) without dotnet and an SDK, qemu-aarch64, the arm64 libc, or when NuGet cannot
serve the linux-arm64 runtime pack.
"""
import ctypes
import glob
import hashlib
import json
import mmap
import os
import resource
import shutil
import signal
import struct
import subprocess

import tempfile
import time

import core_to_minidump
import dotnet_checks
import dumps

PROGRAM = os.path.join(dumps.SOURCE, "dotnet", "program")
SYS_TGKILL_X86_64 = 234
check = dumps.Checks()


def published(cache):
    """The published program's folder, made once per source."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(PROGRAM)):
        with open(os.path.join(PROGRAM, name), "rb") as f:
            digest.update(name.encode() + f.read())
    out = os.path.join(cache, digest.hexdigest()[:16])
    app = os.path.join(out, "StackwalkDotnet")
    if os.access(app, os.X_OK):
        return out
    shutil.rmtree(cache, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="stackwalk-dotnet-arm64-") as tmp:
        source = os.path.join(tmp, "program")
        shutil.copytree(PROGRAM, source)
        result = subprocess.run(["dotnet", "publish", "-c", "Release", "-r", "linux-arm64", "--self-contained", "true",
                                 "-nologo", "-v:q", "-o", out], cwd=source, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        if "NU1" in result.stdout + result.stderr:
            dumps.skip("NuGet does not serve the linux-arm64 runtime pack here")
        raise SystemExit(f"dotnet publish -r linux-arm64 failed:\n{result.stdout}{result.stderr}")
    return out


def unlimited_core():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def kill_with_core(process, run):
    """SIGSEGV until the guest dies of it. The runtime's handler, run for a SIGSEGV sent to
    the main thread, restores the default action and re-raises it to the process, which
    qemu never delivers while every guest thread waits in the kernel; the next SIGSEGV
    from outside then takes the default action, and qemu writes the core. No SIGSEGV once
    the core is begun: one that arrives while qemu writes it kills qemu with the core cut
    short (a loaded machine's park core lost its last 28 MiB, stacks among them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(SYS_TGKILL_X86_64, process.pid, process.pid, signal.SIGSEGV)
    for _ in range(60):
        try:
            process.wait(timeout=1)
            return
        except subprocess.TimeoutExpired:
            if not glob.glob(os.path.join(run, "qemu_*.core")):
                process.send_signal(signal.SIGSEGV)


def complete_core(path):
    """Whether the file holds every byte its program headers place in it."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        try:
            ends = [offset + filesz for _, offset, _, filesz, _ in core_to_minidump.elf_segments(data)]
        except struct.error:  # the program headers themselves are cut off
            return False
        return max(ends, default=0) <= len(data)


def capture(app, mode, work):
    """Runs the program under qemu in MODE until it dies with a core: (core, record)."""
    run = os.path.join(work, mode)
    os.makedirs(os.path.join(run, "core"))  # stops the host kernel's core of qemu itself
    record = os.path.join(run, "record.json")
    process = subprocess.Popen(["qemu-aarch64", os.path.join(app, "StackwalkDotnet"), mode, record], cwd=run,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               preexec_fn=unlimited_core, env=dict(os.environ, QEMU_STACK_SIZE="1048576"))
    try:
        if mode == "park":
            for line in process.stdout:
                if line.strip() == "READY":
                    break
            # A scenario thread that has signalled may still be on its way to its blocking call,
            # as the x86-64 captures wait for. The record names their threads.
            with open(record) as f:
                tids = [t["os_thread_id"] for t in json.load(f)["threads"]]
            dumps.wait_until_asleep(process.pid, timeout=60.0, tids=tids)
            kill_with_core(process, run)
        process.wait(timeout=120)
    finally:
        process.kill()
    cores = glob.glob(os.path.join(run, "qemu_*.core"))
    if len(cores) != 1:
        raise SystemExit(f"{mode}: qemu wrote no core (exit {process.returncode})")
    if not complete_core(cores[0]):
        raise SystemExit(f"{mode}: qemu's core is cut short ({os.path.getsize(cores[0])} bytes)")
    with open(record) as f:
        return cores[0], json.load(f)


# The modes that die of an unhandled exception, and its type: crash throws it, nullref
# faults at BalanceOf's first instruction (a FaultingExceptionFrame holds the fault's context).
UNHANDLED = {"crash": "System.InvalidOperationException", "nullref": "System.NullReferenceException"}


CONTEXT_ARM64_SIZE, CONTEXT_ARM64_CONTROL = 0x390, 0x400001


def check_raw_contexts(label, mode, document):
    """--raw-context on arm64: every context is a CONTEXT_ARM64. One that claims the
    control group holds the frame's pc and sp, or, for a runtime Frame, those of a
    frame the walk reaches below it (the context it carries: for nullref's
    FaultingExceptionFrame, the fault in BalanceOf)."""
    contexts, wrong, carried = 0, [], {}
    for thread in document["threads"]:
        frames = thread["frames"]
        for index, frame in enumerate(frames):
            raw = bytes.fromhex(frame.get("raw_context") or "")
            if not raw:
                continue
            contexts += 1
            if len(raw) != CONTEXT_ARM64_SIZE:
                wrong.append(f"{len(raw)} bytes")
                continue
            flags, sp, pc = struct.unpack_from("<I", raw)[0], *struct.unpack_from("<QQ", raw, 0x100)
            if flags & CONTEXT_ARM64_CONTROL != CONTEXT_ARM64_CONTROL:
                continue
            at = [(int(f["ip"], 16), int(f["sp"], 16)) for f in frames[index + 1:]] if frame["kind"] == "runtime" \
                else [(int(frame["ip"], 16), int(frame["sp"], 16))]
            if (pc, sp) not in at:
                wrong.append(f"{frame['kind']} {frame['function'] or frame['frame_name']}: pc {pc:#x} sp {sp:#x}")
            if frame["kind"] == "runtime":
                carried[frame["frame_name"]] = next(f["method"] for f in frames[index + 1:]
                                                    if (int(f["ip"], 16), int(f["sp"], 16)) == (pc, sp))
    fault = carried.get("FaultingExceptionFrame") or ""
    check(contexts > 0 and not wrong and (mode != "nullref" or "NullRefScenario.BalanceOf" in fault),
          f"{label}: {contexts} raw contexts, each its frame's pc and sp"
          + (f"; the FaultingExceptionFrame's is BalanceOf's fault" if mode == "nullref" else "")
          + (f" ({wrong[:5]}, the FaultingExceptionFrame's: {fault})" if wrong or mode == "nullref" and not fault
             else ""))


def check_core(stackwalk, app, mode, core, record, work):
    label = f"arm64 {mode}"
    args = [core, "-e", os.path.join(app, "StackwalkDotnet")]
    mixed = dotnet_checks.walk(stackwalk, args, work)
    managed_only = dotnet_checks.walk(stackwalk, args, work, "--managed-only")
    runtime = mixed["runtimes"][0] if mixed["runtimes"] else {}
    check(runtime.get("version") == record["runtime_version"],
          f"{label}: runtime {record['runtime_version']} found (reported {runtime.get('version')})")
    for walk_kind, document in (("mixed", mixed), ("managed-only", managed_only)):
        dotnet_checks.check_managed_frames(check, label, document, walk_kind)
        by_tid = {t["tid"]: t for t in document["threads"]}
        for recorded in record["threads"]:
            scenario = dotnet_checks.scenario(recorded)
            thread = by_tid.get(recorded["os_thread_id"])
            check(thread is not None and thread["managed_thread_id"] == scenario["managed_thread_id"],
                  f"{label} ({walk_kind}): scenario {scenario['scenario']} is thread {recorded['os_thread_id']}")
            dotnet_checks.check_thread(check, label, thread, scenario, walk_kind)
            thrown = thread and thread["last_thrown_exception"]
            got = thrown and (thrown["type"], thrown["message"])
            want = dotnet_checks.EXCEPTIONS.get(scenario["scenario"])
            check(got == want, f"{label} ({walk_kind}): scenario {scenario['scenario']}: last thrown exception {want}"
                  + ("" if got == want else f" (got {got})"))
    callers = [f for t in mixed["threads"] for f in t["frames"][1:]
               if f["kind"] == "managed" and not f["inlined"]]
    by_unwind_info = sum(f["trust"] == "unwind_info" for f in callers)
    by_frame_pointer = [f"{f['method']}" for f in callers if f["trust"] == "frame_pointer"]
    check(by_unwind_info > 0 and not by_frame_pointer,
          f"{label}: {by_unwind_info} managed callers found by the runtime's arm64 unwind data"
          + (f"; by frame pointers: {by_frame_pointer}" if by_frame_pointer else ""))
    if mode in UNHANDLED:
        crashed = [t for t in mixed["threads"] if t["crashed"]]
        thrown = crashed[0]["last_thrown_exception"] if crashed else {}
        thrower = [r["os_thread_id"] for r in record["threads"] if r["scenario"] in ("f", "g")]
        check([t["tid"] for t in crashed] == thrower and (thrown or {}).get("type") == UNHANDLED[mode],
              f"{label}: the crashing thread is the one that threw ({thrower}), with its unhandled {UNHANDLED[mode]} "
              f"(got {[t['tid'] for t in crashed]}, {thrown})")
    check_raw_contexts(label, mode, dotnet_checks.walk(stackwalk, args, work, "--raw-context"))
    frames = sum(len(t["frames"]) for t in mixed["threads"])
    print(f"     {label}: {len(mixed['threads'])} threads, {frames} frames")


def main(stackwalk, options):
    if not shutil.which("dotnet") or not subprocess.run(["dotnet", "--list-sdks"], capture_output=True,
                                                        text=True).stdout.strip():
        dumps.skip("dotnet with an SDK is not installed")
    if not shutil.which("qemu-aarch64") or not os.path.exists("/lib/aarch64-linux-gnu/libc.so.6"):
        dumps.skip("qemu-aarch64 or the arm64 libc is not installed")
    start = time.monotonic()
    app = published(os.path.join(os.path.dirname(stackwalk), "dotnet-arm64"))
    print(f"     published for linux-arm64 in {time.monotonic() - start:.1f} s: {app}")
    with tempfile.TemporaryDirectory(prefix="stackwalk-dotnet-arm64-") as work:
        for mode in ("park", "crash", "nullref"):
            core, record = capture(app, mode, work)
            check_core(stackwalk, app, mode, core, record, work)
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 1)
