#!/bin/bash
# bench/big-core.sh [STACKWALK]: stackwalk against eu-stack on a core of several GiB, 501 threads.
#
#   bench/big-core.sh                    uses build/stackwalk (builds it first if it is missing)
#   bench/big-core.sh path/to/stackwalk  uses that binary
#   BENCH_RUNS=9                         timed rounds per tool (default 5; the median is reported)
#   BENCH_DIR=/tmp/b                     work directory (default build/bench); this benchmark
#                                        uses its big-core/ subdirectory
#   BENCH_HEAP_MIB=3072                  heap the program fills before it starts its threads
#                                        (default 3072, lowered to what disk and RAM allow)
#   BENCH_THREADS=500                    threads besides main (default 500)
#   BENCH_KEEP=1                         keep the cores (by default they are deleted at the end)
#
# Builds bench/programs/many-threads.c (-O2 -g) and captures it twice with gcore, with the same
# BENCH_THREADS threads (each 20-30 frames deep, blocked in read()): once after it has filled
# BENCH_HEAP_MIB of heap (the big core), once without (the small core: the same threads, the
# same stacks and modules, only smaller). Then bench/bigcore.py times `stackwalk CORE -a`,
# `stackwalk CORE -a --json` and `eu-stack -i -s` on both cores side by side, measures
# stackwalk's peak RSS on a tiny test dump too (when build/dumps exists), says whether the
# project's targets are met (peak memory that does not grow with the dump's size; the big core
# walked in under 0.5 s) and checks that the big core's walk is complete.
#
# Needs gcc, python3, gdb (gcore) and elfutils (eu-stack): Debian packages. Without gdb or
# eu-stack it says so and exits 0 (skipped). gcore must be allowed to ptrace the program.
#
# Exit status: 0 when the benchmark ran (targets met or not) or was skipped; 1 when stackwalk
# failed or its stacks are incomplete; 2 on a setup error.
set -euo pipefail

source "$(dirname "$0")/common.sh"
RUNS=${BENCH_RUNS:-5}
OUT=${BENCH_DIR:-$ROOT/build/bench}/big-core
HEAP_MIB=${BENCH_HEAP_MIB:-3072}
THREADS=${BENCH_THREADS:-500}

bench_skip_without "gdb elfutils" gdb gcore eu-stack
bench_need gcc python3
bench_stackwalk stackwalk "$@"
bench_out_dir
EXE=$OUT/many-threads
BIG=$OUT/big.core
SMALL=$OUT/small.core
rm -f "$BIG" "$SMALL" "$OUT"/gcore.* "$OUT"/out-* "$OUT"/*.json*

# ---------------------------------------------------------------- size the heap
# The program holds the heap in RAM while gcore writes it out, and the core (heap + stacks)
# must fit on the disk with room to spare; the page cache keeps what it can of it.
disk_mib=$(( $(df -Pk "$OUT" | awk 'NR == 2 { print $4 }') / 1024 ))
ram_mib=$(( $(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / 1024 ))
max_heap=$(( disk_mib - 2048 < ram_mib / 2 ? disk_mib - 2048 : ram_mib / 2 ))
if (( HEAP_MIB > max_heap )); then
    echo "bench: lowering the heap from $HEAP_MIB MiB to $max_heap MiB (disk $disk_mib MiB free, RAM $ram_mib MiB available)"
    HEAP_MIB=$max_heap
fi
(( HEAP_MIB >= 256 )) || die "not enough disk or RAM for a big core (disk $disk_mib MiB free, RAM $ram_mib MiB available)"

# ---------------------------------------------------------------- build
gcc -O2 -g -Wall -Wextra -pthread -o "$EXE" "$HERE/programs/many-threads.c"

# ---------------------------------------------------------------- capture
source "$HERE/capture.sh"
cleanup() {
    capture_cleanup
    if [[ ${BENCH_KEEP:-0} != 1 ]]; then
        rm -f "$BIG" "$SMALL" "$OUT"/gcore.[0-9]*
    fi
}
trap cleanup EXIT

READY_TIMEOUT=120 capture "$OUT" "$BIG" "$EXE" "$THREADS" "$HEAP_MIB"
echo "bench: captured $BIG ($CAPTURED_TASKS threads, heap $HEAP_MIB MiB, $(( $(stat -c %s "$BIG") >> 20 )) MiB) with gcore in $CAPTURE_SECONDS s"
capture "$OUT" "$SMALL" "$EXE" "$THREADS" 0
echo "bench: captured $SMALL ($CAPTURED_TASKS threads, no heap, $(( $(stat -c %s "$SMALL") >> 20 )) MiB) with gcore in $CAPTURE_SECONDS s"
bench_about

# ---------------------------------------------------------------- measure
TINY=()
DUMPS=$(dirname "$SW")/dumps
[[ -d $DUMPS/cores ]] || DUMPS=$ROOT/build/dumps
if [[ -f $DUMPS/cores/sig-segv-a.core ]]; then
    TINY=(--tiny "$DUMPS/cores/sig-segv-a.core" --tiny-args "--sysroot $DUMPS/sysroot --module-path $DUMPS/bin")
fi
set +e
python3 "$HERE/bigcore.py" --stackwalk "$SW" --exe "$EXE" --big "$BIG" --small "$SMALL" \
    --threads $((THREADS + 1)) --runs "$RUNS" --out "$OUT" "${TINY[@]}"
status=$?
set -e
if [[ ${BENCH_KEEP:-0} == 1 ]]; then
    echo "bench: kept $BIG and $SMALL (BENCH_KEEP=1)"
fi
exit $status
