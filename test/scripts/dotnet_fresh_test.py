#!/usr/bin/env python3
"""When dotnet is installed: build test/dumps/dotnet/program, capture fresh dumps of it with
the installed runtime (test/dumps/dotnet/make-dumps.sh into a temporary directory; with ClrMD
when NuGet serves it: then the crashing thread's first managed frame is also ClrMD's) and walk them with stackwalk, the installed runtime's folder and the fresh app's
folder as module paths, against the capture's own truth (dotnet_checks.py, shared with
dotnet_test.py):

- the program's own record of its stacks (System.Diagnostics.StackTrace, taken by each
  scenario thread right before it blocked): every scenario's methods in the program's order
  in the mixed-mode walk and in --managed-only, with the runtime Frames each scenario has
  among them (InlinedCallFrame of the P/Invoke, SoftwareExceptionFrame under the catch, ...),
  the recorded MethodDescs of the non-generic methods; every managed frame has a MethodDesc
  and a name; no warnings;
- ClrMD's view of each fresh dump, when make-dumps.sh could build it (NuGet): --managed-only
  equals it on every thread (dotnet_checks.check_against_clrmd, as dotnet_test.py does for the
  committed dumps);
- the crash dump's crashing thread;
- the runtime: the version stackwalk and --runtime-info report is the one the program ran
  on and one `dotnet --list-runtimes` lists, and its module files are the installed ones;
- the program's gc mode, dumped until threads the GC suspended by hijacking a return address
  are caught (gc_suspension).

The unpacked dumps are not used (the argument is there for the common test interface).
Skips (77) without dotnet, an SDK, a Microsoft.NETCore.App runtime or its createdump.

Usage: dotnet_fresh_test.py STACKWALK UNPACKED_DUMPS_DIR
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dotnet_checks
import dumps

MAKE_DUMPS = os.path.join(dumps.SOURCE, "dotnet", "make-dumps.sh")
CAPTURE_TIMEOUT = 150  # seconds; a capture takes ~5-10 s (the build 2-5 s of it)
check = dumps.Checks()


def dotnet_output(dotnet, *args):
    result = subprocess.run([dotnet, *args], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1", DOTNET_NOLOGO="1"))
    return result.stdout if result.returncode == 0 else ""


def installed_runtimes(dotnet):
    """(version, folder) of every Microsoft.NETCore.App `dotnet --list-runtimes` lists, in its order."""
    out = []
    for line in dotnet_output(dotnet, "--list-runtimes").splitlines():
        m = re.match(r"Microsoft\.NETCore\.App (\S+) \[(.*)\]$", line.strip())
        if m:
            out.append((m.group(1), os.path.join(m.group(2), m.group(1))))
    return out


def capture(out, work, dotnet_root, version):
    """make-dumps.sh OUT with WORK for the build and the run; its output, or None on failure."""
    env = dict(os.environ, WORK=work, DOTNET_ROOT=dotnet_root, RUNTIME_VERSION=version,
               # no build servers outliving the test
               MSBUILDDISABLENODEREUSE="1", DOTNET_CLI_USE_MSBUILD_SERVER="0", UseSharedCompilation="false")
    process = subprocess.Popen(["bash", MAKE_DUMPS, out], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=CAPTURE_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the script, the build and the parked program
        output, _ = process.communicate()
        print(output)
        check(False, f"make-dumps.sh finished within {CAPTURE_TIMEOUT} s")
        return None
    if process.returncode != 0:
        print(output)
        check(False, f"make-dumps.sh exited {process.returncode}")
        return None
    return output


GC_DUMPS = 6  # dumps of the gc mode taken at most; 1-2 hijacked threads in each, seen here


def hijacked_threads(report):
    """tid -> the HijackFrame entry and the managed frames after it, for each thread with one."""
    out = {}
    for thread in report["threads"]:
        frames = thread["frames"]
        at = next((i for i, f in enumerate(frames) if f["frame_name"] == "HijackFrame"), None)
        if at is not None:
            out[thread["tid"]] = (frames[at], [f for f in frames[at + 1:] if f["kind"] == "managed"])
    return out


def gc_suspension(stackwalk, work, runtime_dir, tmp):
    """The program's gc mode (threads computing while another collects), dumped a few times
    until threads the GC suspended by hijacking a return address are caught: the managed frame
    after each HijackFrame is at the Frame's return address (the hijacked method, which the
    hijack stub's CFI used to lose), and with ClrMD, each such thread's frames are ClrMD's."""
    app_dir = os.path.join(work, "app")
    oracle = os.path.join(work, "oracle", "clrmd-oracle")
    process = subprocess.Popen([os.path.join(app_dir, "StackwalkDotnet"), "gc"], stdout=subprocess.PIPE, text=True)
    hijacked = 0
    try:
        if process.stdout.readline().strip() != "READY":
            check(False, "the gc mode started")
            return
        for i in range(GC_DUMPS):
            core = os.path.join(tmp, f"gc-{i}.core")
            subprocess.run([os.path.join(runtime_dir, "createdump"), "--normal", "-f", core, str(process.pid)],
                           capture_output=True, check=True, timeout=60)
            args = [core, "--module-path", runtime_dir, "--module-path", app_dir]
            managed_only = dotnet_checks.walk(stackwalk, args, tmp, "--managed-only")
            threads = hijacked_threads(managed_only)
            for tid, (frame, managed) in threads.items():
                check(managed and int(managed[0]["ip"], 16) == int(frame["ip"], 16),
                      f"gc-{i} thread {tid}: the managed frame after its HijackFrame is at the Frame's return "
                      f"address {frame['ip']} ({managed[0]['function'] + ' at ' + managed[0]['ip'] if managed else 'none'})")
            if threads and os.access(oracle, os.X_OK):
                clrmd = json.loads(subprocess.run([oracle, core, os.path.join(runtime_dir, "libmscordaccore.so")],
                                                  capture_output=True, text=True, check=True).stdout)
                clrmd["threads"] = [t for t in clrmd["threads"] if t["os_thread_id"] in threads]
                dotnet_checks.check_against_clrmd(check, f"gc-{i} (hijacked threads)", managed_only, clrmd)
            os.remove(core)
            hijacked += len(threads)
            if hijacked >= 2:
                break
    finally:
        process.kill()
        process.wait()
    print(f"     gc mode: {hijacked} thread(s) suspended by a hijacked return caught in {i + 1} dump(s)"
          + ("" if hijacked else " (none: nothing checked)"))


def main(stackwalk, unpacked, options):
    dotnet = shutil.which("dotnet")
    if dotnet is None:
        dumps.skip("dotnet is not installed")
    if not dotnet_output(dotnet, "--list-sdks").strip():
        dumps.skip("dotnet has no SDK to build test/dumps/dotnet/program")
    runtimes = installed_runtimes(dotnet)
    if not runtimes:
        dumps.skip("dotnet lists no Microsoft.NETCore.App runtime")
    # make-dumps.sh's choice: the runtime `dotnet --list-runtimes` lists last
    version, runtime_dir = runtimes[-1]
    if not os.access(os.path.join(runtime_dir, "createdump"), os.X_OK):
        dumps.skip(f"the runtime {version} has no createdump in {runtime_dir}")
    dotnet_root = os.path.dirname(os.path.dirname(os.path.dirname(runtime_dir)))
    print(f"     runtime {version} in {runtime_dir}")

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stackwalk-dotnet-fresh-") as tmp:
        out, work = os.path.join(tmp, "out"), os.path.join(tmp, "work")
        if capture(out, work, dotnet_root, version) is None:
            return check.summary()
        captured = time.monotonic()
        print(f"     captured in {captured - start:.1f} s (build, park, createdump, crash)")
        app_dir = os.path.join(work, "app")
        with open(os.path.join(out, "dumps.json")) as f:
            manifest = json.load(f)["dumps"]
        names = [d["name"] for d in manifest]
        check({"park-normal", "park-heap", "crash-normal"} <= set(names), f"fresh dumps: {', '.join(names)}")
        installed = [v for v, _ in runtimes]
        compared = 0
        for dump in manifest:
            name = "fresh " + dump["name"]
            check(dump["runtime_version"] == version and version in installed,
                  f"{name}: the program ran on {dump['runtime_version']} (installed: {', '.join(installed)})")
            args = [os.path.join(out, dump["name"] + ".core"), "--module-path", runtime_dir, "--module-path", app_dir]
            managed_only = dotnet_checks.walk(stackwalk, args, tmp, "--managed-only")
            mixed = dotnet_checks.walk(stackwalk, args, tmp)
            dotnet_checks.check_dump(check, name, dump, mixed, managed_only)
            oracle = os.path.join(out, dump["name"] + ".clrmd.json")
            if os.path.exists(oracle):
                with open(oracle) as f:
                    dotnet_checks.check_against_clrmd(check, name, managed_only, json.load(f))
                compared += 1
            dotnet_checks.check_runtime_info(check, name, stackwalk, args, tmp, dump)
            files = {m["name"]: m["file"] for m in mixed["modules"]}
            wanted = {"libcoreclr.so": runtime_dir, "System.Private.CoreLib.dll": runtime_dir,
                      "StackwalkDotnet.dll": app_dir}
            wrong = [f"{module}: {files.get(module)}" for module, folder in wanted.items()
                     if not (files.get(module) and os.path.dirname(os.path.join(tmp, files[module])) == folder)]
            check(not wrong, f"{name}: the runtime's and the app's module files are the installed and "
                  "the fresh ones" + (f" (not: {'; '.join(wrong)})" if wrong else ""))
        print(f"     {compared} of {len(manifest)} fresh dumps compared with ClrMD "
              "(none when NuGet does not serve it: make-dumps.sh then writes no ClrMD output)")
        gc_suspension(stackwalk, work, runtime_dir, tmp)
        print(f"     walked and checked in {time.monotonic() - captured:.1f} s; "
              f"{time.monotonic() - start:.1f} s in all")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
