# bench/capture.sh: sourced by run.sh and big-core.sh (not run on its own).
#
#   capture OUT CORE EXE [ARGS...]
#
# Starts EXE ARGS (ASLR off when setarch allows it) with stdout/stderr in OUT/program.*, waits
# for its "READY <pid>" line and for every task to be asleep, takes a core with gdb's gcore,
# kills the program and moves the core to CORE. Sets CAPTURED_TASKS (threads in the process)
# and CAPTURE_SECONDS (gcore's wall time). Calls die (bench/common.sh) on a setup error.
# READY_TIMEOUT (seconds, default 10) bounds the wait for READY.

NORAND=()
if command -v setarch >/dev/null && setarch "$(uname -m)" -R true 2>/dev/null; then
    NORAND=(setarch "$(uname -m)" -R)
fi

capture_all_asleep() { # pid: every task in state S
    local st
    for st in /proc/"$1"/task/*/stat; do
        [[ $(sed 's/.*) //' "$st" | cut -c1) == S ]] || return 1
    done
}

capture_pid=
capture_cleanup() {
    if [[ -n $capture_pid ]]; then
        kill -9 "$capture_pid" 2>/dev/null || true
        wait "$capture_pid" 2>/dev/null || true
        capture_pid=
    fi
}

capture() {
    local out=$1 core=$2 exe=$3
    shift 3
    local name tries t0
    name=$(basename "$exe")
    rm -f "$core" "$out"/gcore.[0-9]*
    "${NORAND[@]}" "$exe" "$@" >"$out/program.stdout" 2>"$out/program.stderr" &
    capture_pid=$!
    tries=$((${READY_TIMEOUT:-10} * 20))
    for _ in $(seq "$tries"); do
        grep -q READY "$out/program.stdout" 2>/dev/null && break
        kill -0 "$capture_pid" 2>/dev/null || die "$name exited early: $(cat "$out/program.stderr")"
        sleep 0.05
    done
    grep -q READY "$out/program.stdout" || die "$name never became ready"
    for _ in $(seq 100); do
        capture_all_asleep "$capture_pid" && break
        sleep 0.05
    done
    capture_all_asleep "$capture_pid" || die "$name: not every thread is asleep"
    CAPTURED_TASKS=$(ls /proc/"$capture_pid"/task | wc -l)
    t0=$(date +%s.%N)
    gcore -o "$out/gcore" "$capture_pid" >"$out/gcore.log" 2>&1 || die "gcore failed, see $out/gcore.log"
    CAPTURE_SECONDS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    capture_cleanup
    mv "$out"/gcore.[0-9]* "$core"
}
