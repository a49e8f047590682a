#!/bin/bash
# make-windows-dumps.sh OUTDIR: build program/ for win-x64, run it under Wine and write
# Windows minidumps of it, for a test to walk (nothing here is committed: a full-memory
# dump is 120-135 MB).
#
# OUTDIR gets:
#   park-full.dmp      the parked process (scenarios a-e), written by windows/minidump-writer.c
#                      (dbghelp's MiniDumpWriteDump with full memory)
#   crash-full.dmp     (f): written by the runtime itself at the unhandled exception: it starts
#                      its createdump.exe (DOTNET_DbgEnableMiniDump=1, DOTNET_DbgMiniDumpType=4)
#   park.record.json, crash.record.json   the program's own record of its threads' stacks
#   app/               the published program: self-contained, so the runtime's files
#                      (coreclr.dll, System.Private.CoreLib.dll, createdump.exe) are beside it
#
# Needs wine (64-bit), x86_64-w64-mingw32-gcc and dotnet with an SDK; the win-x64 runtime
# pack comes from NuGet. Exits 3 when the restore fails (no NuGet, or the pack is not there),
# 1 on any other failure. Environment: WORK (default /tmp/stackwalk-dumps/dotnet-windows)
# holds the build, the Wine prefix and the run.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
[ $# = 1 ] || { echo "usage: make-windows-dumps.sh OUTDIR" >&2; exit 2; }
WORK=${WORK:-/tmp/stackwalk-dumps/dotnet-windows}
mkdir -p "$1" "$WORK"
OUT=$(cd "$1" && pwd)
WORK=$(cd "$WORK" && pwd)
APP=$OUT/app
RUN=$WORK/run
die() { echo "make-windows-dumps: $*" >&2; exit 1; }
# Wine sees the Unix root as drive Z:
winpath() { printf 'Z:%s' "${1//\//\\}"; }

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
# no Wine debug output, no Gecko installer, no window (mscoree stays: Wine's loader needs it
# for IL-only images such as System.Runtime.dll)
export WINEPREFIX=$WORK/prefix WINEDEBUG=-all WINEDLLOVERRIDES="mshtml="
unset DISPLAY

# --- build: the program (out of the source tree) and the dump writer ---------------------------
rm -rf "$APP" "$WORK/obj" "$WORK/bin" "$RUN"
mkdir -p "$RUN"
if ! (cd "$HERE/program" && dotnet publish -c Release -r win-x64 --self-contained true -nologo -v:q \
        -o "$APP" -p:BaseIntermediateOutputPath="$WORK/obj/" -p:BaseOutputPath="$WORK/bin/" \
        >"$WORK/publish.log" 2>&1); then
    cat "$WORK/publish.log" >&2
    grep -q "error NU1" "$WORK/publish.log" && { echo "make-windows-dumps: the restore failed" >&2; exit 3; }
    die "publishing program/ for win-x64 failed"
fi
x86_64-w64-mingw32-gcc -O2 -Wall -o "$WORK/minidump-writer.exe" "$HERE/windows/minidump-writer.c" -ldbghelp \
    || die "building windows/minidump-writer.c failed"

# --- Wine: a prefix of our own, and never a process left behind --------------------------------
trap 'wineserver -k 2>/dev/null || true' EXIT
trap 'exit 143' HUP INT TERM
[ -f "$WINEPREFIX/system.reg" ] || wineboot -i >"$WORK/wineboot.log" 2>&1 || die "wineboot failed"

# --- the parked process --------------------------------------------------------------------------
rm -f "$OUT"/park-full.dmp "$OUT"/crash-full.dmp "$OUT"/*.record.json
wine "$APP/StackwalkDotnet.exe" park "$(winpath "$OUT/park.record.json")" \
    >"$RUN/park.stdout" 2>"$RUN/park.stderr" &
PARKED=$!
for _ in $(seq 1 600); do
    grep -q READY "$RUN/park.stdout" 2>/dev/null && break
    kill -0 "$PARKED" 2>/dev/null || { cat "$RUN/park.stderr" >&2; die "the program exited early"; }
    sleep 0.1
done
grep -q READY "$RUN/park.stdout" || die "the program never printed READY"
# The record is written once every scenario thread has signalled, right before its
# blocking call; Wine has no /proc view of a thread's system call to wait for, so wait a
# moment more (the Linux dumps' make-dumps.sh checks /proc).
sleep 1
PID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$OUT/park.record.json")
wine "$WORK/minidump-writer.exe" "$PID" "$(winpath "$OUT/park-full.dmp")" >"$RUN/writer.log" 2>&1 \
    || { cat "$RUN/writer.log" >&2; die "minidump-writer failed"; }
wineserver -k 2>/dev/null || true
wait "$PARKED" 2>/dev/null || true

# --- (f) the crash: the runtime writes the dump itself ----------------------------------------
set +e
DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=4 DOTNET_DbgMiniDumpName="$(winpath "$OUT/crash-full.dmp")" \
    wine "$APP/StackwalkDotnet.exe" crash "$(winpath "$OUT/crash.record.json")" \
    >"$RUN/crash.stdout" 2>"$RUN/crash.stderr"
echo $? >"$OUT/crash.exitcode"
set -e
[ -s "$OUT/crash-full.dmp" ] || { cat "$RUN/crash.stderr" >&2; die "the crash wrote no dump"; }
echo "make-windows-dumps: dumps in $OUT"
