# bench/common.sh: sourced by run.sh, big-core.sh and batch.sh (not run on its own).
#
# Sets HERE (bench/) and ROOT (the source tree) from the sourcing script's path, and defines
# the steps they share:
#
#   die MESSAGE...                      "bench: MESSAGE" on stderr, exit 2 (setup error)
#   bench_skip_without PACKAGES TOOL... exit 0 (skipped) when a TOOL is not on PATH, naming the
#                                       Debian PACKAGES to install
#   bench_need TOOL...                  die when a TOOL is not on PATH
#   bench_stackwalk TARGET [ARG]        SW: ARG when given (it must be executable), else
#                                       build/stackwalk, configured and built (ninja TARGET, or
#                                       every target when TARGET is "") when it is missing;
#                                       made absolute
#   bench_out_dir                       creates OUT and makes it absolute
#   bench_about                         the stackwalk, eu-stack and machine lines of a report

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")

die() { echo "bench: $*" >&2; exit 2; }

bench_skip_without() {
    local packages=$1 tool missing=()
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if ((${#missing[@]})); then
        echo "bench: skipped: missing ${missing[*]} (apt-get install $packages)"
        exit 0
    fi
}

bench_need() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || die "missing tool: $tool"
    done
}

bench_stackwalk() {
    local target=$1
    shift
    if [[ $# -ge 1 ]]; then
        SW=$1
        [[ -x $SW ]] || die "not an executable: $SW"
    else
        SW=$ROOT/build/stackwalk
        if [[ ! -x $SW ]]; then
            echo "bench: building stackwalk"
            cmake -S "$ROOT" -B "$ROOT/build" -G Ninja >/dev/null
            ninja -C "$ROOT/build" ${target:+"$target"} >/dev/null
        fi
    fi
    SW=$(cd "$(dirname "$SW")" && pwd)/$(basename "$SW")
}

bench_out_dir() {
    mkdir -p "$OUT"
    OUT=$(cd "$OUT" && pwd)
}

bench_about() {
    echo "bench: stackwalk $SW"
    echo "bench: $(eu-stack --version 2>&1 | head -1)"
    echo "bench: $(nproc) cores, $(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) >> 20 )) GiB RAM, $(uname -sr), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
