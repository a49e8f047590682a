#!/bin/bash
# bench/batch.sh [STACKWALK]: 1,000 small dumps: one stackwalk batch against 1,000 separate runs.
#
#   bench/batch.sh                       uses build/stackwalk (builds it first if it is missing)
#   bench/batch.sh path/to/stackwalk     uses that binary (its test dumps: build/dumps)
#   BENCH_RUNS=3                         timed rounds (default 1; the median is reported)
#   BENCH_COUNT=1000                     dumps in the batch (default 1000)
#   BENCH_DIR=/tmp/b                     work directory (default build/bench); outputs go to its
#                                        batch/ subdirectory
#   BENCH_BATCH_DIR=/path                where the dump copies go (default: /dev/shm/stackwalk-batch
#                                        when /dev/shm is a tmpfs with room, else BENCH_DIR/batch)
#   BENCH_SYMLINKS=1                     symlinks to the test dumps instead of copies
#
# Makes BENCH_COUNT paths NNNN-NAME.core cycling through the 15 test cores build/dumps/cores/*.core
# (copies, on tmpfs when there is one), then bench/batch.py measures side by side:
#   stackwalk P1 .. P1000 --json -a --sysroot S --module-path B          (default --jobs)
#   stackwalk P1 .. P1000 --json -a --sysroot S --module-path B --jobs 1
#   stackwalk P1 .. P1000 --json -a --sysroot S --module-path B --untrusted   (a worker process per dump)
#   stackwalk P --json -a --sysroot S --module-path B                    x 1000, one after another
#   eu-stack -i -s --core P -e EXE                                      x 1000, one after another
# and checks the batch's output: 1000 lines, each a JSON document of the dump given at that place.
# The copies are deleted at the end.
#
# Needs python3, the test dumps (cmake + ninja unpack them into build/dumps) and elfutils
# (eu-stack); without eu-stack it says so and exits 0 (skipped).
#
# Exit status: 0 ran (whatever the figures) or skipped; 1 stackwalk failed or its batch output is
# wrong; 2 setup error.
set -euo pipefail

source "$(dirname "$0")/common.sh"
RUNS=${BENCH_RUNS:-1}
COUNT=${BENCH_COUNT:-1000}
OUT=${BENCH_DIR:-$ROOT/build/bench}/batch

bench_skip_without elfutils eu-stack
bench_need python3
bench_stackwalk "" "$@"
DUMPS=$ROOT/build/dumps
[[ -f $DUMPS/dumps.json && -d $DUMPS/cores ]] || die "no test dumps in $DUMPS (run cmake and ninja first)"

bench_out_dir
rm -rf "$OUT"/sep-sw "$OUT"/sep-eu "$OUT"/out-*

# ---------------------------------------------------------------- the dump paths
src_mib=$(du -smL "$DUMPS"/cores/*.core | awk '{ s += $1 } END { print s }')
need_mib=$(( src_mib * COUNT / 15 + 256 ))
if [[ -n ${BENCH_BATCH_DIR:-} ]]; then
    DIR=$BENCH_BATCH_DIR
elif [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]] &&
     (( $(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') / 1024 > need_mib )); then
    DIR=/dev/shm/stackwalk-batch
else
    DIR=$OUT/dumps
fi
rm -rf "$DIR"
mkdir -p "$DIR"
cleanup() { rm -rf "$DIR"; }
trap cleanup EXIT
mode=copies
[[ ${BENCH_SYMLINKS:-0} == 1 ]] && mode=symlinks
mapfile -t cores < <(ls "$DUMPS"/cores/*.core)
LIST=$OUT/paths.txt
: >"$LIST"
for ((i = 0; i < COUNT; i++)); do
    src=${cores[i % ${#cores[@]}]}
    dst=$(printf '%s/%04d-%s' "$DIR" "$i" "$(basename "$src")")
    if [[ $mode == symlinks ]]; then
        ln -s "$src" "$dst"
    else
        cp "$src" "$dst"
    fi
    echo "$dst" >>"$LIST"
done
echo "bench: $COUNT dumps ($mode of the ${#cores[@]} test cores, $(du -smL "$DIR" | cut -f1) MiB) in $DIR ($(stat -f -c %T "$DIR"))"

# eu-stack cannot take a sysroot: it opens the libraries at the paths the cores recorded, i.e.
# this machine's. Say whether they are the sysroot's (same build ID) or not.
same=0 differ=()
for lib in "$DUMPS"/sysroot/usr/lib/x86_64-linux-gnu/*.so*; do
    [[ -L $lib ]] && continue
    host=/usr/lib/x86_64-linux-gnu/$(basename "$lib")
    a=$(readelf -n "$lib" 2>/dev/null | awk '/Build ID/ { print $3 }')
    b=$(readelf -n "$host" 2>/dev/null | awk '/Build ID/ { print $3 }' || true)
    if [[ -n $a && $a == "$b" ]]; then same=$((same + 1)); else differ+=("$(basename "$lib")"); fi
done
if ((${#differ[@]})); then
    echo "bench: eu-stack reads this machine's libraries, not the sysroot's; differing from the sysroot: ${differ[*]} (its frames in them are wrong or missing)"
else
    echo "bench: eu-stack reads this machine's libraries, not the sysroot's; all $same are the sysroot's (same build ID), so its stacks are comparable"
fi
bench_about

# ---------------------------------------------------------------- measure
python3 "$HERE/batch.py" --stackwalk "$SW" --paths "$LIST" --dumps "$DUMPS" --runs "$RUNS" --out "$OUT"
