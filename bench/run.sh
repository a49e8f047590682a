#!/bin/bash
# bench/run.sh [STACKWALK]: stackwalk against eu-stack and gdb on a core of 201 deep threads.
#
#   bench/run.sh                         uses build/stackwalk (builds it first if it is missing)
#   bench/run.sh path/to/stackwalk       uses that binary
#   BENCH_RUNS=9 bench/run.sh            timed rounds per tool (default 5; the median is reported)
#   BENCH_DIR=/tmp/b bench/run.sh        where the program, the core and the outputs go
#                                        (default build/bench)
#
# Builds bench/programs/many-threads.c (-O2 -g), starts it (ASLR off when setarch is there),
# waits for its READY line and for every task to be asleep, captures a core with gdb's gcore,
# kills the program, then hands the core to bench/measure.py, which times the tools side by
# side, prints the table, the ratios and the targets, and checks that stackwalk's walk is
# complete (every thread 20+ frames deep, frame counts equal to eu-stack's thread by thread).
#
# Needs gcc, python3, gdb (gdb, gcore) and elfutils (eu-stack): Debian packages. Without gdb or
# eu-stack it says so and exits 0 (skipped). gcore must be allowed to ptrace the program: run
# as root, or with kernel.yama.ptrace_scope=0.
#
# Exit status: 0 when the benchmark ran (targets met or not: it reports, it does not gate) or
# was skipped; 1 when stackwalk failed or printed incomplete stacks; 2 on a setup error.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
RUNS=${BENCH_RUNS:-5}
OUT=${BENCH_DIR:-$ROOT/build/bench}

die() { echo "bench: $*" >&2; exit 2; }

missing=()
for tool in gdb gcore eu-stack; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if ((${#missing[@]})); then
    echo "bench: skipped: missing ${missing[*]} (apt-get install gdb elfutils)"
    exit 0
fi
for tool in gcc python3; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
done

if [[ $# -ge 1 ]]; then
    SW=$1
    [[ -x $SW ]] || die "not an executable: $SW"
else
    SW=$ROOT/build/stackwalk
    if [[ ! -x $SW ]]; then
        echo "bench: building stackwalk"
        cmake -S "$ROOT" -B "$ROOT/build" -G Ninja >/dev/null
        ninja -C "$ROOT/build" stackwalk >/dev/null
    fi
fi
SW=$(cd "$(dirname "$SW")" && pwd)/$(basename "$SW")

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
EXE=$OUT/many-threads
CORE=$OUT/many-threads.core
rm -f "$CORE" "$OUT"/gcore.* "$OUT"/out-*

# ---------------------------------------------------------------- build
gcc -O2 -g -Wall -Wextra -pthread -o "$EXE" "$HERE/programs/many-threads.c"

# ---------------------------------------------------------------- capture
NORAND=()
if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    NORAND=(setarch "$(uname -m)" -R)
fi

all_asleep() { # pid: every task in state S
    local st
    for st in /proc/"$1"/task/*/stat; do
        [[ $(sed 's/.*) //' "$st" | cut -c1) == S ]] || return 1
    done
}

pid=
cleanup() {
    if [[ -n $pid ]]; then
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT

"${NORAND[@]}" "$EXE" >"$OUT/program.stdout" 2>"$OUT/program.stderr" &
pid=$!
for _ in $(seq 200); do
    grep -q READY "$OUT/program.stdout" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || die "many-threads exited early: $(cat "$OUT/program.stderr")"
    sleep 0.05
done
grep -q READY "$OUT/program.stdout" || die "many-threads never became ready"
for _ in $(seq 100); do
    all_asleep "$pid" && break
    sleep 0.05
done
all_asleep "$pid" || die "many-threads: not every thread is asleep"
ntasks=$(ls /proc/"$pid"/task | wc -l)
gcore -o "$OUT/gcore" "$pid" >"$OUT/gcore.log" 2>&1 || die "gcore failed, see $OUT/gcore.log"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
pid=
mv "$OUT"/gcore.[0-9]* "$CORE"
echo "bench: captured $CORE ($ntasks threads) with gcore"
echo "bench: stackwalk $SW"
echo "bench: $(eu-stack --version 2>&1 | head -1); $(gdb --version | head -1)"
echo "bench: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- measure
exec python3 "$HERE/measure.py" --stackwalk "$SW" --exe "$EXE" --core "$CORE" --runs "$RUNS" --out "$OUT"
