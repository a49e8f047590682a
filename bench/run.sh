#!/bin/bash
# bench/run.sh [STACKWALK]: stackwalk against eu-stack and gdb on a core of 201 deep threads.
#
#   bench/run.sh                         uses build/stackwalk (builds it first if it is missing)
#   bench/run.sh path/to/stackwalk       uses that binary
#   BENCH_RUNS=9 bench/run.sh            timed rounds per tool (default 5; the median is reported)
#   BENCH_DIR=/tmp/b bench/run.sh        where the program, the core and the outputs go
#                                        (default build/bench)
#   BENCH_BASELINE=old/stackwalk bench/run.sh   also times another stackwalk binary (the build
#                                        before a change) in the same rounds
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

source "$(dirname "$0")/common.sh"
RUNS=${BENCH_RUNS:-5}
OUT=${BENCH_DIR:-$ROOT/build/bench}

bench_skip_without "gdb elfutils" gdb gcore eu-stack
bench_need gcc python3
bench_stackwalk stackwalk "$@"
bench_out_dir
EXE=$OUT/many-threads
CORE=$OUT/many-threads.core
rm -f "$CORE" "$OUT"/gcore.* "$OUT"/out-* "$OUT"/stackwalk.json*

# ---------------------------------------------------------------- build
gcc -O2 -g -Wall -Wextra -pthread -o "$EXE" "$HERE/programs/many-threads.c"

# ---------------------------------------------------------------- capture
source "$HERE/capture.sh"
trap capture_cleanup EXIT
capture "$OUT" "$CORE" "$EXE"
ntasks=$CAPTURED_TASKS
echo "bench: captured $CORE ($ntasks threads) with gcore"
echo "bench: stackwalk $SW"
echo "bench: $(eu-stack --version 2>&1 | head -1); $(gdb --version | head -1)"
echo "bench: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- measure
exec python3 "$HERE/measure.py" --stackwalk "$SW" --exe "$EXE" --core "$CORE" --runs "$RUNS" --out "$OUT" \
  ${BENCH_BASELINE:+--baseline "$BENCH_BASELINE"}
