#!/bin/bash
# make-dumps.sh: build program/ (StackwalkDotnet) with the installed .NET SDK, run it, and
# capture .NET dumps of it with the runtime's own createdump; run ClrMD (clrmd-oracle/) on
# each dump; write a manifest.
#
#   test/dumps/dotnet/make-dumps.sh OUTDIR            capture fresh dumps into OUTDIR (a test
#                                                     can do this into a temp dir); the
#                                                     source tree is not touched
#   test/dumps/dotnet/make-dumps.sh --commit [OUTDIR] the same, then replace the committed
#                                                     files under test/dumps/dotnet (cores/,
#                                                     app/, runtime/, sysroot/, expected/,
#                                                     dumps.json), xz -9e compressed
#
# Environment: FULL=1 also captures a --full dump of the parked process (168 MB, 13 MB
# compressed; committed when made: the committed set was made with FULL=1).
# DOTNET_ROOT (default /usr/share/dotnet), RUNTIME_VERSION (default: the one
# `dotnet --list-runtimes` lists last for Microsoft.NETCore.App), WORK (default
# /tmp/stackwalk-dumps/dotnet: the program is built into WORK/app so that the paths the
# dumps record for it are the same on every run), NO_ORACLE=1 skips ClrMD.
#
# OUTDIR gets:
#   park-normal.core   createdump --normal of the parked process (scenarios a-e)
#   park-heap.core     createdump --withheap of the same process, a moment later
#   park-full.core     (FULL=1 only) createdump --full
#   park-triage.core   createdump --triage of the same process. Not committed.
#   crash-normal.core  mode (f): written by the runtime itself at the unhandled exception
#                      (DOTNET_DbgEnableMiniDump=1, DOTNET_DbgMiniDumpType=1)
#   crash-triage.core  mode (f) again, as a triage dump (type 3: no GC heap strings). Not committed.
#   nullref-heap.core, nullref-triage.core, nullref-full.core  mode (g), written by the
#                      runtime: a NullReferenceException at a method's first instruction (type 2
#                      with heap; type 3, triage, with DOTNET_TieredCompilation=0; type 4, full).
#                      Not committed.
#   park.record.json, crash.record.json   the program's own record of its threads' stacks
#   NAME.clrmd.json    ClrMD's view of each dump (clrmd-oracle)
#   NAME.maps          /proc/PID/maps of the process when it was dumped (park only)
#   dumps.json         the manifest (manifest.py)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
COMMIT=0
if [ "${1:-}" = "--commit" ]; then COMMIT=1; shift; fi
WORK=${WORK:-/tmp/stackwalk-dumps/dotnet}
OUT=${1:-$WORK/out}
DOTNET_ROOT=${DOTNET_ROOT:-/usr/share/dotnet}
DOTNET=${DOTNET:-$DOTNET_ROOT/dotnet}
[ -x "$DOTNET" ] || DOTNET=$(command -v dotnet)
if [ -z "${RUNTIME_VERSION:-}" ]; then
    RUNTIME_VERSION=$("$DOTNET" --list-runtimes | awk '$1=="Microsoft.NETCore.App"{v=$2} END{print v}')
fi
RTDIR=$DOTNET_ROOT/shared/Microsoft.NETCore.App/$RUNTIME_VERSION
CREATEDUMP=$RTDIR/createdump
XZ="xz -9e -T1 --check=crc64"
NORAND="setarch $(uname -m) -R"

die() { echo "make-dumps(dotnet): $*" >&2; exit 1; }
[ -x "$CREATEDUMP" ] || die "no createdump in $RTDIR"
mkdir -p "$OUT" "$WORK"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/*.core "$OUT"/*.record.json "$OUT"/*.clrmd.json "$OUT"/*.maps "$OUT"/*.exitcode "$OUT"/*.stderr "$OUT"/*.stdout \
    "$OUT"/dumps.json

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

# --- build (out of the source tree: bin/obj under WORK) -------------------------------------
rm -rf "$WORK/app" "$WORK/obj"
(cd "$HERE/program" && "$DOTNET" build -c Release -nologo -v:q -o "$WORK/app" \
    -p:BaseIntermediateOutputPath="$WORK/obj/" >"$WORK/build.log" 2>&1) \
    || { cat "$WORK/build.log" >&2; die "building program/ failed"; }
APP=$WORK/app/StackwalkDotnet
[ -x "$APP" ] || die "no $APP after the build"
ORACLE=
if [ "${NO_ORACLE:-0}" != 1 ]; then
    if (cd "$HERE/clrmd-oracle" && "$DOTNET" build -c Release -nologo -v:q -o "$WORK/oracle" \
            -p:BaseIntermediateOutputPath="$WORK/oracle-obj/" >"$WORK/oracle-build.log" 2>&1); then
        ORACLE=$WORK/oracle/clrmd-oracle
    else
        echo "make-dumps(dotnet): building clrmd-oracle failed (NuGet?), no ClrMD output; see $WORK/oracle-build.log" >&2
    fi
fi

# --- the parked process ------------------------------------------------------------------------
RUN=$WORK/run
rm -rf "$RUN"; mkdir -p "$RUN"
$NORAND "$APP" park "$OUT/park.record.json" >"$RUN/park.stdout" 2>"$RUN/park.stderr" &
PID=$!
# it blocks forever: never leave it behind (a failing step under set -e, a killed script)
trap '[ -z "${PID:-}" ] || kill -9 "$PID" 2>/dev/null || true' EXIT
trap 'exit 143' HUP INT TERM
for _ in $(seq 1 600); do
    grep -q READY "$RUN/park.stdout" 2>/dev/null && break
    kill -0 "$PID" 2>/dev/null || { cat "$RUN/park.stderr" >&2; die "the program exited early"; }
    sleep 0.1
done
grep -q READY "$RUN/park.stdout" || { kill -9 "$PID"; die "the program never printed READY"; }
# every scenario thread must be asleep in the kernel in its blocking system call:
# read (0) for (b), openat (257) for (h), futex (202) for the Thread.Sleep ones
TIDS=$(python3 -c 'import json,sys; print(" ".join("%s:%d" % (t["scenario"], t["os_thread_id"]) for t in json.load(open(sys.argv[1]))["threads"]))' "$OUT/park.record.json")
for _ in $(seq 1 50); do
    ok=1
    for st in $TIDS; do
        tid=${st#*:}
        state=$(sed 's/.*) //' "/proc/$PID/task/$tid/stat" | cut -d' ' -f1)
        sc=$(cut -d' ' -f1 "/proc/$PID/task/$tid/syscall")
        case "${st%%:*}" in b) want=0 ;; h) want=257 ;; *) want=202 ;; esac
        [ "$state" = S ] && [ "$sc" = "$want" ] || ok=0
    done
    [ $ok = 1 ] && break
    sleep 0.1
done
[ $ok = 1 ] || { kill -9 "$PID"; die "not every scenario thread is blocked in its system call"; }
for st in $TIDS; do
    tid=${st#*:}
    echo "${st%%:*} $tid $(cut -d' ' -f1 /proc/$PID/task/$tid/syscall) $(cat /proc/$PID/task/$tid/wchan)"
done >"$OUT/park.syscalls"
cp "/proc/$PID/maps" "$OUT/park.maps"
for t in /proc/$PID/task/*; do echo "$(basename "$t") $(cat "$t/comm")"; done >"$OUT/park.tasks"
"$CREATEDUMP" --normal -f "$OUT/park-normal.core" "$PID" >"$RUN/createdump-normal.log" 2>&1 \
    || { kill -9 "$PID"; cat "$RUN/createdump-normal.log" >&2; die "createdump --normal failed"; }
"$CREATEDUMP" --withheap -f "$OUT/park-heap.core" "$PID" >"$RUN/createdump-heap.log" 2>&1 \
    || { kill -9 "$PID"; cat "$RUN/createdump-heap.log" >&2; die "createdump --withheap failed"; }
"$CREATEDUMP" --triage -f "$OUT/park-triage.core" "$PID" >"$RUN/createdump-triage.log" 2>&1 \
    || { kill -9 "$PID"; cat "$RUN/createdump-triage.log" >&2; die "createdump --triage failed"; }
if [ "${FULL:-0}" = 1 ]; then
    "$CREATEDUMP" --full -f "$OUT/park-full.core" "$PID" >"$RUN/createdump-full.log" 2>&1 \
        || { kill -9 "$PID"; die "createdump --full failed"; }
fi
echo "$PID" >"$OUT/park.pid"
kill -9 "$PID"; wait "$PID" 2>/dev/null || true
rm -f "$OUT/park.record.json.fifo"
PID=

# --- (f) the crash: the runtime writes the dump itself ---------------------------------------
set +e
{ ( DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=1 DOTNET_DbgMiniDumpName="$OUT/crash-normal.core" \
  DOTNET_CreateDumpDiagnostics=1 \
    $NORAND "$APP" crash "$OUT/crash.record.json" >"$RUN/crash.stdout" 2>"$RUN/crash.stderr" ); } 2>/dev/null
echo $? >"$OUT/crash.exitcode"
set -e
cp "$RUN/crash.stderr" "$OUT/crash.stderr"
cp "$RUN/crash.stdout" "$OUT/crash.stdout" # createdump's own lines: "Crashing thread TID signal N"
[ -s "$OUT/crash-normal.core" ] || { cat "$RUN/crash.stderr" >&2; die "the crash wrote no dump"; }

# --- (f) again as a triage dump (type 3): the exception's message string is not in it --------
set +e
{ ( DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=3 DOTNET_DbgMiniDumpName="$OUT/crash-triage.core" \
    $NORAND "$APP" crash "$OUT/crash-triage.record.json" >"$RUN/crash-triage.stdout" 2>"$RUN/crash-triage.stderr" ); } 2>/dev/null
echo $? >"$OUT/crash-triage.exitcode"
set -e
cp "$RUN/crash-triage.stderr" "$RUN/crash-triage.stdout" "$OUT/"
[ -s "$OUT/crash-triage.core" ] || { cat "$RUN/crash-triage.stderr" >&2; die "the triage crash wrote no dump"; }

# --- (g) nullref: a fault at a method's first instruction, on a worker thread ----------------
# The runtime writes these dumps too: with heap (type 2) at the default tiering, a triage
# dump (type 3: no strings, so the exception's message is not in it) with TieredCompilation=0,
# and a full dump (type 4: every mapping, ~170 MB, not committed).
for spec in nullref-heap:2:1 nullref-triage:3:0 nullref-full:4:1; do
    IFS=: read -r name type tiered <<<"$spec"
    set +e
    { ( DOTNET_DbgEnableMiniDump=1 DOTNET_DbgMiniDumpType=$type DOTNET_DbgMiniDumpName="$OUT/$name.core" \
        DOTNET_TieredCompilation=$tiered \
        $NORAND "$APP" nullref "$OUT/$name.record.json" >"$RUN/$name.stdout" 2>"$RUN/$name.stderr" ); } 2>/dev/null
    echo $? >"$OUT/$name.exitcode"
    set -e
    cp "$RUN/$name.stderr" "$RUN/$name.stdout" "$OUT/"
    [ -s "$OUT/$name.core" ] || { cat "$RUN/$name.stderr" >&2; die "the nullref crash ($name) wrote no dump"; }
done

# --- ClrMD --------------------------------------------------------------------------------------
if [ -n "$ORACLE" ]; then
    for core in "$OUT"/*.core; do
        n=$(basename "$core" .core)
        "$ORACLE" "$core" "$RTDIR/libmscordaccore.so" >"$OUT/$n.clrmd.json" 2>"$RUN/$n.clrmd.log" \
            || { cat "$RUN/$n.clrmd.log" >&2; die "clrmd-oracle failed on $n"; }
    done
fi

python3 "$HERE/manifest.py" "$OUT" "$RTDIR" "$WORK/app" "$HERE"
echo "make-dumps(dotnet): dumps in $OUT"

[ $COMMIT = 1 ] || exit 0

# --- --commit: replace the committed files ------------------------------------------------------
cd "$HERE"
rm -rf cores app runtime sysroot expected
mkdir -p cores app runtime expected
for core in "$OUT"/park-normal.core "$OUT"/park-heap.core "$OUT"/park-full.core "$OUT"/crash-normal.core; do
    [ -f "$core" ] || continue
    $XZ -c "$core" >"cores/$(basename "$core").xz"
done
cp "$OUT"/*.clrmd.json expected/
cp "$OUT"/park.record.json "$OUT"/crash.record.json expected/
# the files listed in the manifest's "module_files" (app/, runtime/, sysroot/)
python3 - "$OUT/dumps.json" <<'EOF' >"$WORK/commit-files"
import json, sys
m = json.load(open(sys.argv[1]))
for f in m["module_files"] + m["extra_files"]:
    if f["committed"].startswith("../"):
        continue  # already in the parent test/dumps/sysroot
    print(f["committed"][:-3] + "\t" + f["recorded_path"])
EOF
while IFS=$'\t' read -r dest src; do
    mkdir -p "$(dirname "$dest")"
    $XZ -c "$src" >"$dest.xz"
done <"$WORK/commit-files"
cp "$OUT/dumps.json" dumps.json
du -sh "$HERE"
