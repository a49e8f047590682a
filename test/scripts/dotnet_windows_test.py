#!/usr/bin/env python3
""".NET on Windows: build test/dumps/dotnet/program for win-x64, run it under Wine and write
full-memory minidumps of it (test/dumps/dotnet/make-windows-dumps.sh into a temporary
directory), then walk them with stackwalk against the program's own record
(dotnet_checks.py, as for the Linux dumps):

- park-full.dmp (scenarios a-e, written by MiniDumpWriteDump from outside) and
  crash-full.dmp ((f), written by the runtime's createdump.exe at the unhandled exception);
- each walked twice: with nothing but the dump (the PE modules are rebuilt from the dump's
  memory, the contract descriptor found in coreclr.dll's exports) and with the published
  program's folder as --module-path;
- every scenario's methods in the program's order, in the mixed walk and in --managed-only,
  with the runtime Frames each scenario has among them; the recorded MethodDescs; every
  managed frame named with a MethodDesc; the runtime version the program ran on; the
  managed thread ids in --runtime-info; no warnings.

The dumps have no exception stream (Wine's dbghelp writes none for createdump.exe), so the
crash thread is checked as scenario (f)'s thread, not as the reported crash.
Skips (77) without wine, MinGW-w64 (x86_64-w64-mingw32-gcc), dotnet with an SDK, or when
NuGet does not provide the win-x64 runtime pack.

Usage: dotnet_windows_test.py STACKWALK UNPACKED_DUMPS_DIR (the second is not used)
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import dotnet_checks
import dumps

MAKE_DUMPS = os.path.join(dumps.SOURCE, "dotnet", "make-windows-dumps.sh")
# A first run makes a Wine prefix (~20 s) and may download the runtime pack; the dumps
# themselves take ~30 s.
CAPTURE_TIMEOUT = 400
RESTORE_FAILED = 3  # make-windows-dumps.sh's exit status when NuGet has no runtime pack
check = dumps.Checks()


def capture(out, work):
    """make-windows-dumps.sh OUT with WORK: True when it made the dumps; skips when the
    runtime pack could not be restored."""
    env = dict(os.environ, WORK=work, MSBUILDDISABLENODEREUSE="1", DOTNET_CLI_USE_MSBUILD_SERVER="0",
               UseSharedCompilation="false")
    process = subprocess.Popen(["bash", MAKE_DUMPS, out], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=CAPTURE_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        subprocess.run(["wineserver", "-k"], env=dict(os.environ, WINEPREFIX=os.path.join(work, "prefix")))
        output, _ = process.communicate()
        print(output)
        check(False, f"make-windows-dumps.sh finished within {CAPTURE_TIMEOUT} s")
        return False
    if process.returncode == RESTORE_FAILED:
        dumps.skip("NuGet did not provide the win-x64 runtime pack:\n" + output[-2000:])
    if process.returncode != 0:
        print(output)
        check(False, f"make-windows-dumps.sh exited {process.returncode}")
        return False
    return True


def dump_entry(name, record):
    """A dumps.json-style entry (what dotnet_checks reads) from the program's own record."""
    return {"name": name, "runtime_version": record["runtime_version"], "crash": None,
            "scenario_threads": {str(t["os_thread_id"]): dotnet_checks.scenario(t) for t in record["threads"]}}


def main(stackwalk, unpacked, options):
    missing = [tool for tool in ("wine", "wineserver", "x86_64-w64-mingw32-gcc", "dotnet") if not shutil.which(tool)]
    if missing:
        dumps.skip(f"not installed: {', '.join(missing)}")
    sdks = subprocess.run(["dotnet", "--list-sdks"], capture_output=True, text=True, timeout=60).stdout
    if not sdks.strip():
        dumps.skip("dotnet has no SDK to build test/dumps/dotnet/program")

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="stackwalk-dotnet-windows-") as tmp:
        out, work = os.path.join(tmp, "out"), os.path.join(tmp, "work")
        if not capture(out, work):
            return check.summary()
        captured = time.monotonic()
        print(f"     captured in {captured - start:.1f} s (publish, Wine prefix, park, dump, crash)")
        for name, mode in (("park-full", "park"), ("crash-full", "crash")):
            with open(os.path.join(out, f"{mode}.record.json")) as f:
                dump = dump_entry(name, json.load(f))
            for label, extra in ((f"windows {name}", []),
                                 (f"windows {name} --module-path", ["--module-path", os.path.join(out, "app")])):
                args = [os.path.join(out, name + ".dmp"), *extra]
                managed_only = dotnet_checks.walk(stackwalk, args, tmp, "--managed-only")
                mixed = dotnet_checks.walk(stackwalk, args, tmp)
                dotnet_checks.check_dump(check, label, dump, mixed, managed_only)
                info = dotnet_checks.check_runtime_info(check, label, stackwalk, args, tmp, dump)
                if not extra and info:
                    check(info["descriptor_source"] == "dump (the module's loaded image: no file)",
                          f"{label}: the descriptor from coreclr.dll's image rebuilt from the dump, without its "
                          f"file ({info['descriptor_source']})")
        print(f"     walked and checked in {time.monotonic() - captured:.1f} s")
    return check.summary()


if __name__ == "__main__":
    dumps.script_main(main, __doc__, 2)
