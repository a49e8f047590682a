#!/bin/bash
# make-dumps.sh: rebuild the test programs and recapture every core from scratch.
#
#   test/dumps/make-dumps.sh            (run as a user that may ptrace its children; root here)
#   test/dumps/make-dumps.sh NAME...    only (re)make the dumps named: the other dumps' cores,
#                                       binaries, debug files, libraries and oracles are left
#                                       as they are, their dumps.json entries kept (use this
#                                       to add a dump without changing the reviewed ones)
#
# Builds in the fixed directory /tmp/stackwalk-dumps (sources are copied to .../src and
# compiled there with relative names, executables go to .../bin), so the paths recorded in
# the cores and in the DWARF are the same on every run. ASLR is disabled for the captured
# processes (setarch -R) so that addresses stay the same from one regeneration to the next,
# except for the dumps listed in ASLR below (sig-*): those are run with ASLR on (plain
# `setarch ARCH`, which clears ADDR_NO_RANDOMIZE) so that their load addresses differ from
# run to run, and share one executable (EXE_OF: built once, committed once as bin/EXE.xz).
#
# Live, blocked processes are captured with gdb's gcore once every thread is asleep in the
# kernel; crashing ones with the kernel's own core file (ulimit -c unlimited), or, if
# core_pattern pipes cores elsewhere or no core appears, by running the program under gdb
# and gcore'ing at the signal. The method is recorded in dumps.json.
#
# Then it replaces, under test/dumps: cores/*.core.xz, bin/*.xz, debug/.build-id/**.xz,
# sysroot/**.xz (every shared library the cores map, at the path the core records),
# dumps.json, and oracle/*.gdb.json (gdb's backtraces, via oracle.sh), oracle/*.gdb-kinds.json
# (gdb's frame types), and for the dumps in ARGS_ORACLE oracle/NAME.gdb-args.json (gdb's
# frames with their arguments, oracle.sh with ORACLE_ARGS=1) and gdb's `thread apply all bt`
# text, oracle/NAME.gdb-bt.txt and (all arguments printed in full) NAME.gdb-bt-full.txt.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=/tmp/stackwalk-dumps
SRC=$ROOT/src
BIN=$ROOT/bin
RUN=$ROOT/run
OUT=$ROOT/unpacked
XZ="xz -9 -T1 --check=crc64"

# name | source | compiler | flags | capture (live|crash) | what it shows
DUMPS=(
"threads-O0-fp|threads.c|gcc|-O0 -g -fno-omit-frame-pointer|live|Six threads blocked in pthread_join, pthread_cond_wait, read, nanosleep (5-deep recursion), pthread_mutex_lock and poll; -O0 with frame pointers, the static inline reader helpers are real frames."
"threads-O2-nofp|threads.c|gcc|-O2 -g -fomit-frame-pointer|live|The same six threads built -O2 without frame pointers; the reader thread's read() call site sits in a DWARF inline chain reader_outer -> reader_middle -> reader_inner inside reader_worker."
"sighandler|sighandler.c|gcc|-O2 -g|live|Threads blocked inside signal handlers: one in a SIGUSR1 handler on its thread stack (one __restore_rt frame); another in a SIGWINCH handler raised inside a SIGUSR2 handler, both handlers running on a sigaltstack in heap memory (two nested __restore_rt frames, the stack pointer jumps between regions)."
"recursion-alloca|recursion-alloca.c|gcc|-O2 -g -fomit-frame-pointer|live|Main thread 300 frames deep in a rec_alloca -> rec_vla -> rec_plain cycle (alloca and VLA frames use %rbp, the plain one does not), a worker thread 60 frames deep."
"stripped|stripped.c|gcc|-O2 -fomit-frame-pointer|live|Fully stripped executable (strip --strip-all, no -g): the program's own frames have no symbols at all, only libc's do; three threads."
"stripped-debuglink|stripped.c|gcc|-O2 -g -fomit-frame-pointer|live|Same program, stripped, with its symbols and DWARF in stripped-debuglink.debug, found by .gnu_debuglink next to the executable or by build-id under debug/.build-id; three threads."
"cxx-throw|cxx-throw.cpp|g++|-O2 -g|live|C++ exceptions in flight: one thread in a destructor run by an exception's landing pad (in a .cold part), one in a std::terminate handler called from __gxx_personality_v0 during _Unwind_RaiseException phase 2 (__cxa_throw through a noexcept frame)."
"crash-segv|crash-segv.c|gcc|-O2 -g|crash|SIGSEGV (write to 0x10 through a wild pointer) in a secondary thread, at -O2 with the faulting function called from an inlined parse_record; two other threads blocked."
"crash-callnull|crash-callnull.c|gcc|-O0 -g -fno-omit-frame-pointer|crash|SIGSEGV from calling a null function pointer: the crashing frame's IP is 0 and its caller's return address is at [rsp]; one other thread blocked."
"crash-abort|crash-abort.c|gcc|-O0 -g -fno-omit-frame-pointer|crash|A failed assert() in the main thread: __assert_fail -> abort -> raise -> __pthread_kill_implementation (SIGABRT); two other threads blocked."
"crash-cxx-uncaught|crash-cxx-uncaught.cpp|g++|-O2 -g|crash|An uncaught C++ exception in a secondary thread: __cxa_throw -> std::terminate -> __verbose_terminate_handler -> abort (SIGABRT); two other threads blocked."
"debugframe-only|debugframe-only.c|gcc|-O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables|live|No .eh_frame for the program's own functions (only crt1's _start and the PLT have FDEs there): their CFI is only in .debug_frame, and that only in the separate debugframe-only.debug (strip --strip-debug --strip-unneeded, found by .gnu_debuglink or by build-id under debug/.build-id); -O2 without frame pointers, three threads 3-4 frames deep in the program."
"sig-segv-a|sig-crash.c|gcc|-O2 -g|crash|ASLR on (crash signatures): SIGSEGV writing through a NULL buffer in a secondary thread, request_worker -> handle_request -> parse_header; main in pthread_join, a reader blocked in read. Same executable (bin/sig-crash) as sig-segv-b and sig-abort; sig-segv-b is a second run of it at other load addresses."
"sig-segv-b|sig-crash.c|gcc|-O2 -g|crash|ASLR on (crash signatures): a second run of sig-segv-a's executable, the same SIGSEGV in request_worker -> handle_request -> parse_header, with the executable, libc and ld.so loaded at other addresses than in sig-segv-a (same stack, different pcs)."
"sig-abort|sig-crash.c|gcc|-O2 -g|crash|ASLR on (crash signatures): the same executable as sig-segv-a/b run with the argument 'abort': SIGABRT in the main thread, main -> load_config -> validate_input -> abort -> raise -> __pthread_kill_implementation; the worker blocked in wait_request -> pthread_cond_wait, a reader in read."
"smashed-stack|smashed-stack.c|gcc|-O2 -g|live|A smashed stack: the main thread, main -> run_job -> stage_one -> stage_two -> stage_three -> smash_and_block, has overwritten 48 bytes with 0x41 from smash_and_block's own return address slot upwards (the return addresses into stage_three and stage_two, stage_three's saved rbx, part of stage_two's locals) and blocks in read() without returning; the return addresses into stage_one, run_job, main, __libc_start_call_main, ... are intact above it. CFI unwinding (gdb's bt) goes wrong after smash_and_block; the program's own record of its return addresses is in dumps.json (expected_return_addresses). The other thread is blocked in worker -> worker_wait -> pthread_cond_wait."
"jit-gdb|jit-gdb.c|gcc|-O2 -g|live|JIT code registered through the GDB JIT interface (__jit_debug_descriptor / __jit_debug_register_code): the ELF executable bin/jit-gdb-code (jit-gdb-code.c, -O1 -g, linked at 0x7e0000000000, with .eh_frame, .eh_frame_hdr, .symtab and DWARF) copied into an RWX anonymous mapping at its link addresses, its whole file image registered from heap memory; no file mapping, no perf map, no __register_frame. Two threads in jit_thread -> jit_entry -> jit_middle -> jit_dispatch (JIT code, no frame pointers) -> host_block (a host callback) -> read; main in pthread_join. gdb reads the JIT object from the core's memory and names the JIT frames; each thread's own record of its return addresses is in dumps.json (expected_return_addresses, by tid)."
"jit-libunwind|jit-libunwind.c|gcc|-O2 -g|live|JIT code known only through libunwind's dynamic registration (_U_dyn_register, _U_dyn_info_list), hand-assembled into an RWX anonymous page at 0x7e1000000000: thread T in t_thread -> G1 (registered as a binary-search table of .eh_frame FDEs, UNW_INFO_FORMAT_REMOTE_TABLE, which libunwind's unw_backtrace unwinds through) -> t_callback -> read; thread P in p_thread -> G2 (registered in proc-info format, UNW_INFO_FORMAT_DYNAMIC, name jit_frame_fn, prologue/body/epilogue regions with ops in bytes; keeps rbp) -> p_callback -> read; main in pthread_join. No symbols and no CFI anywhere else for the JIT code; each thread's own record of its return addresses is in dumps.json (expected_return_addresses, by tid)."
"args-O0|args.c|gcc|-O0 -g|live|Function arguments for a backtrace with arguments (gdb's bt), -O0: six threads parked in read, pause, pthread_cond_wait and pthread_join under chains of the program's own functions whose parameters are int, unsigned long, char, _Bool, an enum, pointers to a local and to a global, a struct point {int x, y} and a 40-byte struct by value, float and double, nine integer arguments (three on the stack), an always_inline callee with parameters (an inline frame above read), and the entry-value chain entry_outer -> entry_changed -> entry_lost -> entry_leaf; every parameter in its stack slot (DW_OP_fbreg)."
"args-O2|args.c|gcc|-O2 -g|live|The same six threads built -O2: parameters in callee-saved registers, spilled float/double (DW_OP_fbreg), a struct point in a register, the 40-byte struct and arguments 7-9 in the caller's outgoing area, the inlined callee's constants, and entry values: entry_leaf's n only as DW_OP_entry_value(rdi) resolved through the caller's DW_TAG_call_site (gdb: n=n@entry=199), entry_changed's m changed (m=22, m@entry=7), entry_lost's v gone but for its entry value (v=<optimized out>, v@entry=31), and call-site values that need the caller's restored rbx (DW_OP_breg3) or a DW_OP_const_type float."
)
# Dumps that run another name's executable: it is built once as $BIN/EXE, committed once as
# bin/EXE.xz, and is the "executable" of each of them in dumps.json. They must be made
# together (make-dumps.sh sig-segv-a sig-segv-b sig-abort).
declare -A EXE_OF=([sig-segv-a]=sig-crash [sig-segv-b]=sig-crash [sig-abort]=sig-crash)
# Command-line arguments of a dump's program (word-split).
declare -A ARGS_OF=([sig-abort]=abort)
# Libraries a dump's program links with (after the source: gcc links --as-needed here).
declare -A LIBS_OF=([jit-libunwind]="-lunwind -lunwind-x86_64")
# Dumps captured with ASLR on (no setarch -R): their load addresses differ between runs.
ASLR=(sig-segv-a sig-segv-b sig-abort)
# Dumps that also get gdb's arguments oracle (oracle/NAME.gdb-args.json: gdb-frames.py with
# ORACLE_ARGS) and gdb's own `thread apply all bt` text (oracle/NAME.gdb-bt.txt, and with
# `set print frame-arguments all` oracle/NAME.gdb-bt-full.txt), for --args.
ARGS_ORACLE=(args-O0 args-O2)
# Dumps whose debug info is split into bin/NAME.debug (+ debug/.build-id/xx/yyyy.debug).
SPLIT=(stripped-debuglink debugframe-only)
# The JIT code of jit-gdb: built from programs/jit-gdb-code.c into $BIN/jit-gdb-code (which
# the program reads at run time from next to its executable), committed as
# bin/jit-gdb-code.xz; a freestanding ELF executable at a fixed address, with .eh_frame
# (+ .eh_frame_hdr), .symtab and DWARF.
JIT_CODE_ADDR=0x7e0000000000
JIT_CODE_FLAGS="-O1 -g -fasynchronous-unwind-tables -ffreestanding -fno-pic -fno-stack-protector -nostdlib -static -no-pie -Wl,-Ttext-segment=$JIT_CODE_ADDR -Wl,-e,jit_entry -Wl,--eh-frame-hdr -Wl,--build-id"

field() { # field N "a|b|c"
    local IFS='|'
    local -a f
    read -r -a f <<<"$2"
    printf '%s' "${f[$1]}"
}

die() { echo "make-dumps: $*" >&2; exit 1; }

for tool in gcc g++ gdb gcore xz objcopy strip eu-readelf python3 setarch; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
done

NORAND="setarch $(uname -m) -R"

# make-dumps.sh NAME...: keep only those entries of DUMPS (ALL keeps the full list for the
# manifest's order).
ALL=("${DUMPS[@]}")
PARTIAL=
if [[ $# -gt 0 ]]; then
    PARTIAL=1
    sel=()
    for want in "$@"; do
        found=
        for d in "${ALL[@]}"; do
            [[ $(field 0 "$d") == "$want" ]] && { sel+=("$d"); found=1; }
        done
        [[ -n $found ]] || die "no dump named $want"
    done
    DUMPS=("${sel[@]}")
fi
is_split() { local s; for s in "${SPLIT[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
is_aslr() { local s; for s in "${ASLR[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
is_args_oracle() { local s; for s in "${ARGS_ORACLE[@]}"; do [[ $s == "$1" ]] && return 0; done; return 1; }
exe_of() { printf '%s' "${EXE_OF[$1]:-$1}"; }
# setarch -R (ASLR off), or setarch without -R for the ASLR dumps (ASLR on even when this
# script itself runs with ADDR_NO_RANDOMIZE).
run_prefix() { if is_aslr "$1"; then printf 'setarch %s' "$(uname -m)"; else printf '%s' "$NORAND"; fi; }
# A partial run must make every dump that shares an executable with a selected one.
if [[ -n $PARTIAL ]]; then
    for d in "${DUMPS[@]}"; do
        n=$(field 0 "$d")
        [[ -n ${EXE_OF[$n]:-} ]] || continue
        for other in "${!EXE_OF[@]}"; do
            [[ ${EXE_OF[$other]} == "${EXE_OF[$n]}" ]] || continue
            printf '%s\n' "$@" | grep -qx -- "$other" ||
                die "$n shares bin/${EXE_OF[$n]} with $other: make them together"
        done
    done
fi
for d in "${DUMPS[@]}"; do
    if is_aslr "$(field 0 "$d")"; then
        [[ $(cat /proc/sys/kernel/randomize_va_space) != 0 ]] ||
            die "kernel.randomize_va_space is 0: the ASLR dumps need it on"
        break
    fi
done

if [[ -z $PARTIAL ]]; then
    rm -rf "$ROOT"
else
    for d in "${DUMPS[@]}"; do
        name=$(field 0 "$d")
        rm -rf "$BIN/$name" "$BIN/$name.debug" "$RUN/$name" "$ROOT/$name.core" "$BIN/$(exe_of "$name")"
        [[ $name != jit-gdb ]] || rm -f "$BIN/jit-gdb-code"
    done
fi
mkdir -p "$SRC" "$BIN" "$RUN"
cp "$HERE"/programs/*.c "$HERE"/programs/*.cpp "$HERE"/programs/*.h "$SRC"/

# ---------------------------------------------------------------- build
build() {
    local name=$1 src=$2 cc=$3 flags=$4
    # shellcheck disable=SC2086
    (cd "$SRC" && $cc $flags -Wall -Wextra -pthread -o "$BIN/$name" "$src" ${LIBS_OF[$name]:-})
    case $name in
    stripped)
        strip --strip-all "$BIN/$name"
        ;;
    stripped-debuglink)
        objcopy --only-keep-debug "$BIN/$name" "$BIN/$name.debug"
        strip --strip-all "$BIN/$name"
        (cd "$BIN" && objcopy --add-gnu-debuglink="$name.debug" "$name")
        ;;
    debugframe-only)
        objcopy --only-keep-debug "$BIN/$name" "$BIN/$name.debug"
        strip --strip-debug --strip-unneeded "$BIN/$name"
        (cd "$BIN" && objcopy --add-gnu-debuglink="$name.debug" "$name")
        check_debugframe_only "$BIN/$name" "$BIN/$name.debug"
        ;;
    jit-gdb)
        # shellcheck disable=SC2086
        (cd "$SRC" && gcc $JIT_CODE_FLAGS -Wall -Wextra -o "$BIN/jit-gdb-code" jit-gdb-code.c)
        local sect
        for sect in .text .eh_frame .eh_frame_hdr .symtab .debug_info .debug_line; do
            readelf -SW "$BIN/jit-gdb-code" | grep -qF " $sect " || die "jit-gdb-code has no $sect"
        done
        [[ $(readelf -lW "$BIN/jit-gdb-code" | awk '$1 == "LOAD" {print $3; exit}') == 0x0000${JIT_CODE_ADDR#0x} ]] ||
            die "jit-gdb-code's first PT_LOAD is not at $JIT_CODE_ADDR"
        ;;
    esac
}

# The program's own functions (FUNC symbols of the debug file, minus the crt files' ones)
# must have an FDE in the debug file's .debug_frame, none in the executable's .eh_frame,
# and the executable must have no .debug_frame of its own.
check_debugframe_only() { # exe debugfile
    local crt='^(_start|_init|_fini|deregister_tm_clones|register_tm_clones|__do_global_dtors_aux|frame_dummy)$'
    readelf -SW "$1" 2>/dev/null | grep -q '\.debug_frame' && die "$1 still has .debug_frame"
    readelf -SW "$2" 2>/dev/null | grep -q '\.debug_frame' || die "$2 has no .debug_frame"
    python3 - "$1" "$2" "$crt" <<'EOF' || die "$1: .eh_frame / .debug_frame coverage is wrong"
import re, subprocess, sys
exe, dbg, crt = sys.argv[1:]
def fdes(path):
    # (readelf follows .gnu_debuglink and exits 1 with "Unable to find program
    # interpreter name" on the debug file's NOBITS .interp: ignore its status)
    out = subprocess.run(["readelf", "--debug-dump=frames", path],
                         capture_output=True, text=True).stdout
    sect, res = None, []
    for line in out.splitlines():
        m = re.match(r"Contents of the (\S+) section", line)
        if m:
            sect = m.group(1)
        m = re.search(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if m:
            res.append((sect, int(m.group(1), 16), int(m.group(2), 16)))
    return res
funcs = []
for line in subprocess.run(["readelf", "-sW", dbg], capture_output=True,
                           text=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] not in ("UND", "ABS") and int(f[1], 16) > 0 \
            and not re.match(crt, f[7]):
        funcs.append((f[7], int(f[1], 16)))
eh = [(a, b) for s, a, b in fdes(exe) if s == ".eh_frame"]
df = [(a, b) for s, a, b in fdes(dbg) if s == ".debug_frame"]
bad = 0
for name, addr in funcs:
    if any(a <= addr < b for a, b in eh):
        print("make-dumps: in .eh_frame:", name); bad = 1
    if not any(a <= addr < b for a, b in df):
        print("make-dumps: not in .debug_frame:", name); bad = 1
print("make-dumps: %s: %d functions (%s), all only in .debug_frame; .eh_frame FDEs: %s"
      % (exe, len(funcs), " ".join(sorted(n for n, _ in funcs)),
         ", ".join("%#x..%#x" % r for r in eh)))
sys.exit(bad or not funcs)
EOF
}

declare -A BUILT
for d in "${DUMPS[@]}"; do
    exe=$(exe_of "$(field 0 "$d")")
    [[ -n ${BUILT[$exe]:-} ]] && continue  # shared executable: built once
    BUILT[$exe]=1
    build "$exe" "$(field 1 "$d")" "$(field 2 "$d")" "$(field 3 "$d")"
done
echo "make-dumps: built $(ls "$BIN" | wc -l) files in $BIN"

# ---------------------------------------------------------------- capture
all_asleep() { # pid: every task in state S
    local st
    for st in /proc/"$1"/task/*/stat; do
        [[ $(sed 's/.*) //' "$st" | cut -c1) == S ]] || return 1
    done
}

declare -A METHOD
capture_live() {
    local name=$1 dir=$RUN/$1 pid i
    mkdir -p "$dir"
    (cd "$dir" && exec $NORAND "$BIN/$name" >"$dir/stdout" 2>"$dir/stderr") &
    pid=$!
    for i in $(seq 200); do
        grep -q READY "$dir/stdout" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || die "$name exited early"
        sleep 0.05
    done
    grep -q READY "$dir/stdout" || { kill -9 "$pid"; die "$name never became ready"; }
    for i in $(seq 100); do
        all_asleep "$pid" && break
        sleep 0.05
    done
    all_asleep "$pid" || { kill -9 "$pid"; die "$name: not every thread is asleep"; }
    sleep 0.2
    gcore -o "$dir/gcore" "$pid" >"$dir/gcore.log" 2>&1 || { kill -9 "$pid"; die "gcore $name failed"; }
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    mv "$dir/gcore.$pid" "$ROOT/$name.core"
    METHOD[$name]=gcore
}

capture_crash() {
    local name=$1 dir=$RUN/$1 pattern core=
    mkdir -p "$dir"
    pattern=$(cat /proc/sys/kernel/core_pattern)
    if [[ $pattern != \|* ]]; then
        # shellcheck disable=SC2046,SC2086
        (cd "$dir" && ulimit -c unlimited && exec $(run_prefix "$name") "$BIN/$(exe_of "$name")" \
            ${ARGS_OF[$name]:-} >"$dir/stdout" 2>"$dir/stderr") || true
        # core_pattern "core" with core_uses_pid 0 gives "core", else "core.PID"; any
        # other plain pattern is relative to the cwd too, so take any new file named core*.
        for f in "$dir"/core "$dir"/core.* "$dir"/core*; do
            [[ -f $f ]] && { core=$f; break; }
        done
    fi
    if [[ -n $core ]]; then
        mv "$core" "$ROOT/$name.core"
        METHOD[$name]=kernel
    else
        echo "make-dumps: $name: no kernel core (core_pattern '$pattern'), using gdb + gcore" >&2
        local norand=on
        is_aslr "$name" && norand=off
        # shellcheck disable=SC2086
        (cd "$dir" && gdb -batch -nx -ex 'set debuginfod enabled off' -ex 'set startup-with-shell off' \
            -ex "set disable-randomization $norand" -ex run -ex "gcore $ROOT/$name.core" \
            --args "$BIN/$(exe_of "$name")" ${ARGS_OF[$name]:-} >"$dir/gdb.log" 2>&1) || true
        [[ -s $ROOT/$name.core ]] || die "$name: gdb fallback made no core"
        METHOD[$name]=gcore-at-signal
    fi
}

for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    if [[ $(field 4 "$d") == live ]]; then capture_live "$name"; else capture_crash "$name"; fi
    echo "make-dumps: $name: ${METHOD[$name]}, $(du -h "$ROOT/$name.core" | cut -f1)"
done

# The ASLR dumps: the executable's and libc's load addresses (first NT_FILE mapping of each)
# must not be the ASLR-off ones, and must differ between any two dumps of one executable.
load_base() { # core path-suffix
    # (no early exit in awk: eu-readelf would die of SIGPIPE, and pipefail would stop us)
    eu-readelf -n "$1" | awk -v p="$2" '!b && $NF ~ p"$" && $2 == "00000000" {split($1, r, "-"); b = r[1]}
                                        END {print b}'
}
declare -A SEEN_BASE
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    is_aslr "$name" || continue
    exe_base=$(load_base "$ROOT/$name.core" "/bin/$(exe_of "$name")")
    libc_base=$(load_base "$ROOT/$name.core" "/libc.so.6")
    [[ -n $exe_base && -n $libc_base ]] || die "$name: no load address for the executable or libc"
    echo "make-dumps: $name: executable at 0x$exe_base, libc at 0x$libc_base"
    [[ $exe_base != 555555554000 && $libc_base != 7ffff7* ]] || die "$name: ASLR was off"
    for b in "$exe_base" "$libc_base"; do
        [[ -z ${SEEN_BASE[$b]:-} ]] || die "$name: load address 0x$b as in ${SEEN_BASE[$b]}: rerun"
        SEEN_BASE[$b]=$name
    done
done

# ---------------------------------------------------------------- commit tree
cd "$HERE"
[[ -n $PARTIAL ]] || rm -rf cores bin debug sysroot oracle
mkdir -p cores bin debug sysroot oracle

libs_of() { # core -> shared libraries named in its NT_FILE note
    eu-readelf -n "$1" | awk '$NF ~ /^\// {print $NF}' | grep -E '\.so([.0-9]*)?$' | sort -u
}

: >"$ROOT/libs.txt"
declare -A XZED
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    $XZ -c "$ROOT/$name.core" >"cores/$name.core.xz"
    exe=$(exe_of "$name")
    [[ -n ${XZED[$exe]:-} ]] || $XZ -c "$BIN/$exe" >"bin/$exe.xz"  # a shared one once
    XZED[$exe]=1
    [[ $name != jit-gdb ]] || $XZ -c "$BIN/jit-gdb-code" >"bin/jit-gdb-code.xz"
    libs_of "$ROOT/$name.core" >>"$ROOT/libs.txt"
done
: >"$ROOT/bids.txt"
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    is_split "$name" || continue
    $XZ -c "$BIN/$name.debug" >"bin/$name.debug.xz"
    bid=$(eu-readelf -n "$BIN/$name" | awk '/Build ID:/ {print $NF}')
    [[ -n $bid ]] || die "$name has no build-id"
    [[ $(eu-readelf -n "$BIN/$name.debug" | awk '/Build ID:/ {print $NF}') == "$bid" ]] ||
        die "$name.debug has another build-id"
    mkdir -p "debug/.build-id/${bid:0:2}"
    $XZ -c "$BIN/$name.debug" >"debug/.build-id/${bid:0:2}/${bid:2}.debug.xz"
    echo "$name $bid" >>"$ROOT/bids.txt"
done

# Each library is stored once, at the path NT_FILE records (the real file). The dynamic
# linker's own names for them (what gdb and r_debug use) may go through symlinks:
# /lib -> usr/lib, /lib64/ld-linux-x86-64.so.2, libstdc++.so.6 -> libstdc++.so.6.0.30.
# Those become "sysroot_links" in dumps.json, which unpack.py recreates.
: >"$ROOT/links.txt"
sort -u "$ROOT/libs.txt" | while read -r lib; do
    [[ $lib == "$ROOT"/* ]] && continue
    [[ -f $lib ]] || die "library $lib named in a core is not on this machine"
    # (a partial run keeps the libraries already stored, as the other cores recorded them)
    [[ -n $PARTIAL && -f sysroot$lib.xz ]] && continue
    mkdir -p "sysroot$(dirname "$lib")"
    $XZ -c "$lib" >"sysroot$lib.xz"
    for l in "$(dirname "$lib")"/*; do
        if [[ -L $l && $(readlink -f "$l") == "$lib" && $(dirname "$(readlink "$l")") == . ]]; then
            printf '%s %s\n' "${l#/}" "$(readlink "$l")" >>"$ROOT/links.txt"
        fi
    done
done

# ---------------------------------------------------------------- manifest
printf '%s\n' "${ALL[@]}" >"$ROOT/dumps.txt"
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    notes=$(eu-readelf -n "$ROOT/$name.core")
    # first NT_PRSTATUS: the crashing thread in a kernel core; its cursig; siginfo's address
    printf '%s %s %s %s %s %s\n' "$name" "${METHOD[$name]}" \
        "$(grep -c 'CORE .* PRSTATUS' <<<"$notes")" \
        "$(grep -m1 -o 'cursig: [0-9]*' <<<"$notes" | cut -d' ' -f2)" \
        "$(grep -A4 -m1 'CORE .* PRSTATUS' <<<"$notes" | grep -m1 -o ' pid: [0-9]*' | cut -d' ' -f3)" \
        "$(grep -A2 'CORE .* SIGINFO' <<<"$notes" | grep -m1 -o 'fault address: [0-9a-fx]*' | cut -d' ' -f3)"
done >"$ROOT/methods.txt"
: >"$ROOT/exes.txt"  # name exe aslr(0|1) args...
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    aslr=0
    is_aslr "$name" && aslr=1
    echo "$name $(exe_of "$name") $aslr ${ARGS_OF[$name]:-}" >>"$ROOT/exes.txt"
done
python3 - "$ROOT" "$PARTIAL" <<'EOF'
import json, os, subprocess, sys
root, partial = sys.argv[1], sys.argv[2]
bids = dict(line.split() for line in open(os.path.join(root, "bids.txt")))
exes = {}
for line in open(os.path.join(root, "exes.txt")):
    name, exe, aslr, *args = line.split()
    exes[name] = (exe, aslr == "1", args)
# A partial run keeps the other dumps' entries and sysroot links.
old = json.load(open("dumps.json")) if partial else {"dumps": []}
old_entries = {e["name"]: e for e in old["dumps"]}
methods = {}
for line in open(os.path.join(root, "methods.txt")):
    name, method, threads, sig, tid, *addr = line.split()
    methods[name] = (method, int(threads), int(sig), int(tid), addr[0] if addr else None)
links = {"lib": "usr/lib", "lib64": "usr/lib64",
         "usr/lib64/ld-linux-x86-64.so.2": "../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}
links.update(old.get("sysroot_links", {}))
for line in open(os.path.join(root, "links.txt")):
    link, target = line.split()
    links[link] = target
# The oracle's libc/libstdc++ frames (inline and tail-call frames, file:line) depend on the
# host's debug packages (libc6-dbg): record what was installed.
packages = {}
for pkg in ("libc6", "libc6-dbg", "libstdc++6", "libgcc-s1", "gdb", "gcc-12", "linux-kernel"):
    if pkg == "linux-kernel":
        packages[pkg] = os.uname().release
        continue
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg + ":amd64"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                           capture_output=True, text=True)
    packages[pkg] = r.stdout.strip() if r.returncode == 0 else None
if partial and old.get("packages") and old["packages"] != packages:
    sys.exit("make-dumps: the packages differ from those the other dumps were made with: "
             "%s != %s; regenerate everything" % (packages, old["packages"]))
dumps = []
for line in open(os.path.join(root, "dumps.txt")):
    name, src, cc, flags, capture, shows = line.rstrip("\n").split("|", 5)
    if name not in methods:
        if name in old_entries:
            dumps.append(old_entries[name])
        continue
    method, threads, sig, tid, addr = methods[name]
    crash = None
    if capture == "crash":
        crash = {"signal": sig, "name": {11: "SIGSEGV", 6: "SIGABRT"}.get(sig),
                 "thread_id": tid,
                 "address": "0x%016x" % int(addr, 0) if addr is not None else None}
    exe, aslr, args = exes.get(name, (name, False, []))
    entry = {
        "name": name,
        "core": f"cores/{name}.core",
        "executable": f"bin/{exe}",
        "recorded_executable": f"{root}/bin/{exe}",
        "source": f"programs/{src}",
        "build": f"{cc} {flags} -Wall -Wextra -pthread",
        "capture": method,
        "crash": crash,
        "threads": threads,
        "shows": shows,
        "oracle": f"oracle/{name}.gdb.json",
        "oracle_frame_kinds": f"oracle/{name}.gdb-kinds.json",
    }
    if exe != name or args:
        entry["arguments"] = args
    if aslr:
        entry["aslr"] = True
    if name in bids:
        bid = bids[name]
        entry["debug_file"] = f"bin/{name}.debug"
        entry["build_id"] = bid
        entry["build_id_debug_file"] = f"debug/.build-id/{bid[:2]}/{bid[2:]}.debug"
    dumps.append(entry)
manifest = {
    "comment": "Made by make-dumps.sh; paths are relative to the directory unpack.py writes "
               "(the committed files are these paths + .xz). sysroot/ holds every shared "
               "library the cores map, at the path the cores' NT_FILE notes record; "
               "sysroot_links are symlinks unpack.py creates in it so that the names the "
               "dynamic linker recorded (/lib/..., /lib64/...) resolve as on Debian 12.",
    "machine": subprocess.run(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"],
                              capture_output=True, text=True).stdout.strip(),
    "sysroot": "sysroot",
    "sysroot_links": links,
    "packages": packages,
    "dumps": dumps,
}
with open("dumps.json", "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
EOF

# ---------------------------------------------------------------- oracle
# gdb's own `thread apply all bt` of a dump, as text for people to read (with oracle.sh's
# settings, so its frames are the oracle's), after a line saying how it was made.
gdb_bt() { # name [a gdb setting, e.g. 'print frame-arguments all']
    local name=$1 setting=${2:-}
    local opts=(-ex 'set debuginfod enabled off' -ex 'set pagination off' -ex 'set width 0'
        -ex 'set backtrace past-main on' -ex 'set backtrace past-entry on')
    [[ -z $setting ]] || opts+=(-ex "set $setting")
    printf '# %s, bin/%s + cores/%s.core, sysroot the unpacked one: set backtrace past-main on, past-entry on%s; thread apply all bt\n' \
        "$(gdb --version | head -1)" "$name" "$name" "${setting:+; set $setting}"
    gdb -batch -nx "${opts[@]}" -ex "set sysroot $OUT/sysroot" \
        -ex "set debug-file-directory $OUT/sysroot/usr/lib/debug" -ex 'thread apply all bt' \
        "$OUT/bin/$name" "$OUT/cores/$name.core" 2>/dev/null | sed -n '/^Thread /,$p'
}
rm -rf "$OUT"
python3 "$HERE/unpack.py" "$HERE" "$OUT"
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    # oracle.sh reads OUT/bin/NAME: for a shared executable, a symlink to it (only in OUT)
    [[ $(exe_of "$name") == "$name" ]] || ln -sfn "$(exe_of "$name")" "$OUT/bin/$name"
    "$HERE/oracle.sh" "$OUT" "$name" "oracle/$name.gdb.json" >"$RUN/$name/oracle.log" 2>&1 ||
        die "oracle for $name failed: see $RUN/$name/oracle.log"
    GDB_FRAMES="$HERE/frame-kinds.py" "$HERE/oracle.sh" "$OUT" "$name" "oracle/$name.gdb-kinds.json" \
        >/dev/null 2>&1 || die "frame kinds for $name failed"
    python3 - "oracle/$name.gdb.json" "oracle/$name.gdb-kinds.json" <<'EOF2' || die "$name: oracle outputs disagree"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
pcs = lambda d: [[f["pc"] for f in t["frames"]] for t in d["threads"]]
sys.exit(pcs(a) != pcs(b))
EOF2
    # (gdb prints frame 0's source line, or "No such file" for libc's sources: not warnings)
    # Every shared library must come from the sysroot, with its symbols read.
    gdb -batch -nx -ex 'set debuginfod enabled off' -ex "set sysroot $OUT/sysroot" \
        -ex 'info sharedlibrary' "$OUT/bin/$name" "$OUT/cores/$name.core" 2>&1 |
        awk -v s="$OUT/sysroot/" '/^(0x| )/ && $NF ~ /\// && (index($NF, s) != 1 || $0 ~ / No /) {bad = 1; print}
                                  END {exit bad}' ||
        die "$name: gdb did not load every library from $OUT/sysroot (see above)"
    grep -iE 'warning|could not|cannot|mismatch|no such file' "$RUN/$name/oracle.log" |
        grep -vE '^[0-9]+[[:space:]]' |
        sort | uniq -c | sed "s/^/make-dumps: $name: gdb: /" >&2 || true
    is_args_oracle "$name" || continue
    ORACLE_ARGS=1 "$HERE/oracle.sh" "$OUT" "$name" "oracle/$name.gdb-args.json" >/dev/null 2>&1 ||
        die "arguments oracle for $name failed"
    python3 - "oracle/$name.gdb.json" "oracle/$name.gdb-args.json" <<'EOF2' || die "$name: the arguments oracle has other frames"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
pcs = lambda d: [[f["pc"] for f in t["frames"]] for t in d["threads"]]
sys.exit(pcs(a) != pcs(b) or not all("args" in f for t in b["threads"] for f in t["frames"]))
EOF2
    gdb_bt "$name" >"oracle/$name.gdb-bt.txt"
    gdb_bt "$name" 'print frame-arguments all' >"oracle/$name.gdb-bt-full.txt"
done
# ---------------------------------------------------------------- arguments (args-*)
# The args program passes known constants (programs/args.c). Check that gdb's arguments
# oracle shows them (at -O2 a parameter may be optimized out, never another value), that at
# -O2 the DWARF really has what the dump is for (entry_leaf's n as DW_OP_entry_value, the
# caller's DW_TAG_call_site_parameter with DW_AT_call_value 199; arguments 7-9 and the
# 40-byte struct at DW_OP_fbreg, in the caller's outgoing area) and that gdb's bt prints the
# three entry-value forms; then record the values and the oracle files in the dumps.json entry.
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    is_args_oracle "$name" || continue
    python3 - "$name" "$BIN/$name" <<'EOF' || die "$name: arguments check failed"
import json, re, subprocess, sys
name, exe = sys.argv[1:]
optimized = name.endswith("-O2")
# function -> parameter -> the value the parameter holds while the thread is parked, as gdb
# prints it (None: a run-time address; "<args_global>": a pointer to that symbol)
expected = {
    "join_workers": {"ids": None, "count": "5"},
    "scalar_args": {"i": "-7", "ul": "24301", "c": "113 'q'", "b": "true", "e": "COLOR_GREEN"},
    "pointer_args": {"local_p": None, "global_p": "<args_global>"},
    "wait_read": {"fd": "3", "buf": None, "len": "16"},
    "struct_args": {"p": "{x = 3, y = 4}",
                    "b": "{id = 48879, count = 1000000, kind = -2, flags = 165, weight = 0.5, tail = 77}",
                    "f": "3.5", "d": "1.1000000000000001"},
    "wait_cond": {"id": "2"},
    "stack_args": {"a%d" % i: str(11 * i) for i in range(1, 10)},
    "wait_pause": {"why": "3"},
    "inline_host": {"fd": "3", "k": "5"},
    "inline_reader": {"fd": "3", "limit": "4096", "tag": "122 'z'"},
    "entry_outer": {"seed": "42"},
    "entry_changed": {"m": "22"},
    "entry_lost": {"v": "155"},
    "entry_leaf": {"n": "199"},
    "park": {"tag": "9"},
}
# the values at entry where the function changes its parameter before its call
entry_values = {"entry_changed": {"m": "7"}, "entry_lost": {"v": "31"}}
oracle = json.load(open("oracle/%s.gdb-args.json" % name))
seen, wrong = set(), []
for t in oracle["threads"]:
    for f in t["frames"]:
        if f["function"] not in expected:
            continue
        got = {a["name"]: a["value"] for a in f["args"]}
        seen.add(f["function"])
        for param, want in expected[f["function"]].items():
            v = got.get(param, "(absent)")
            if v == "(absent)" or (v is None and not optimized):
                wrong.append("%s.%s = %r" % (f["function"], param, v))
            elif v is not None and want is not None and v != want and \
                    not (want.startswith("<") and v.endswith(" " + want)):
                wrong.append("%s.%s = %r, not %r" % (f["function"], param, v, want))
assert seen == set(expected), "frames gdb shows: %s" % sorted(seen)
assert not wrong, "gdb's arguments: " + "; ".join(wrong)
bt = open("oracle/%s.gdb-bt.txt" % name).read()
if optimized:
    for want in ("entry_leaf (n=n@entry=199)", "entry_changed (m=22, m@entry=7)",
                 "entry_lost (v=<optimized out>, v@entry=31)", "a6=a6@entry=66, a7=77, a8=88, a9=99"):
        assert want in bt, "gdb's bt has no %r" % want
    # The DWARF: the DIEs in order (depth, offset, tag, attributes), the location lists.
    info = subprocess.run(["readelf", "--debug-dump=info", exe], capture_output=True, text=True).stdout
    locs = subprocess.run(["readelf", "--debug-dump=loc", exe], capture_output=True, text=True).stdout
    dies, cur = [], None
    for line in info.splitlines():
        m = re.match(r"\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)", line)
        if m:
            cur = {"depth": int(m.group(1)), "off": int(m.group(2), 16), "tag": m.group(3), "attrs": {}}
            dies.append(cur)
            continue
        m = re.match(r"\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)", line)
        if m and cur is not None:
            cur["attrs"][m.group(1)] = m.group(2).strip()
    name_of = lambda x: x["attrs"].get("DW_AT_name", "").split()[-1] if x["attrs"].get("DW_AT_name") else None
    def function(fn):  # the concrete DIE of a function and the DIEs below it
        i = next(k for k, x in enumerate(dies) if x["tag"] == "DW_TAG_subprogram"
                 and name_of(x) == fn and "DW_AT_low_pc" in x["attrs"])
        kids = []
        for x in dies[i + 1:]:
            if x["depth"] <= dies[i]["depth"]:
                break
            kids.append(x)
        return dies[i], kids
    def loclist(off):
        m = re.search(r"^\s+%08x .*?<End of list>" % off, locs, re.M | re.S)
        return m.group(0) if m else ""
    leaf, kids = function("entry_leaf")
    n = next(x for x in kids if x["tag"] == "DW_TAG_formal_parameter" and name_of(x) == "n")
    off = int(n["attrs"]["DW_AT_location"].split()[0], 16)
    assert "DW_OP_entry_value" in loclist(off), "entry_leaf's n: no DW_OP_entry_value in %r" % loclist(off)
    _, kids = function("entry_lost")
    site = [i for i, x in enumerate(kids) if x["tag"] == "DW_TAG_call_site"
            and x["attrs"].get("DW_AT_call_origin", "").endswith("<0x%x>" % leaf["off"])]
    assert site and kids[site[0] + 1]["tag"] == "DW_TAG_call_site_parameter" and \
        "DW_OP_const1u: 199" in kids[site[0] + 1]["attrs"].get("DW_AT_call_value", ""), \
        "entry_lost's call of entry_leaf has no DW_AT_call_value 199"
    for fn, params in (("stack_args", ("a7", "a8", "a9")), ("struct_args", ("b",))):
        _, kids = function(fn)
        for x in kids:
            if x["tag"] == "DW_TAG_formal_parameter" and name_of(x) in params:
                assert "DW_OP_fbreg" in x["attrs"]["DW_AT_location"], \
                    "%s.%s: %s" % (fn, name_of(x), x["attrs"]["DW_AT_location"])
m = json.load(open("dumps.json"))
for ent in m["dumps"]:
    if ent["name"] == name:
        ent.update({
            "oracle_args": "oracle/%s.gdb-args.json" % name,
            "oracle_bt": "oracle/%s.gdb-bt.txt" % name,
            "oracle_bt_full": "oracle/%s.gdb-bt-full.txt" % name,
            "expected_arguments": expected,
            "expected_entry_values": entry_values,
        })
with open("dumps.json", "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
print("make-dumps: %s: gdb shows the program's arguments%s" % (
    name, "; the DWARF has n as DW_OP_entry_value and the call site's value 199" if optimized else ""))
EOF
done
# ---------------------------------------------------------------- programs' own stack records
# A program that smashes its own stack (smashed-stack) prints, before it does, the return
# addresses of its frames and where they sit (TID / FRAMES / SLOTS / SMASH lines on stdout;
# see programs/smashed-stack.c). Copy that record into its dumps.json entry, with each
# return address's function (the function, not an inlined one, that gdb's debug info puts
# address - 1 in), whether the core still holds it at its slot (it must, outside the
# smashed bytes; the smashed bytes must all be 0x41), which of them gdb's backtrace of that
# thread (the oracle) still finds, and "oracle_incomplete": true (the oracle's frames for
# "smashed_thread" are not the truth: compare that thread against expected_return_addresses).
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    grep -q '^FRAMES ' "$RUN/$name/stdout" || continue
    python3 - "$name" "$RUN/$name/stdout" "$OUT" "$ROOT/$name.record.json" <<'EOF' || die "$name: stack record check failed"
import json, subprocess, sys
name, stdout, out, tmp = sys.argv[1:]
rec = {}
for line in open(stdout):
    w = line.split()
    if w and w[0] in ("TID", "FRAMES", "SLOTS", "SMASH"):
        rec[w[0]] = [int(x, 0) for x in w[1:]]
tid = rec["TID"][0]
addrs, slots = rec["FRAMES"], rec["SLOTS"]
lo, hi, nsmashed = rec["SMASH"]
assert len(addrs) == len(slots) and all(a < b for a, b in zip(slots, slots[1:]))
# gdb on the unpacked core: function of each return address, the core's word at each slot,
# and the smashed bytes.
script = ["import gdb, json",
          "r = {'funcs': [], 'words': [], 'smash': None}",
          # the physical function (the outermost function block, not an inlined one), as the
          # oracle names frames; `info symbol` (the ELF symbol) where there is no debug info
          "def outer_function(pc):",
          "    name, b = None, gdb.block_for_pc(pc)",
          "    while b is not None and not b.is_global and not b.is_static:",
          "        name = b.function.name if b.function is not None else name",
          "        b = b.superblock",
          "    return name",
          "def word(a):",
          "    return int.from_bytes(gdb.selected_inferior().read_memory(a, 8).tobytes(), 'little')"]
for a, s in zip(addrs, slots):
    script.append("r['funcs'].append([outer_function(%#x), gdb.execute('info symbol %#x', to_string=True)])"
                  % (a - 1, a - 1))
    script.append("r['words'].append(word(%#x))" % s)
script.append("r['smash'] = gdb.selected_inferior().read_memory(%#x, %d).tobytes().hex()" % (lo, hi - lo))
script.append("open(%r, 'w').write(json.dumps(r))" % tmp)
with open(tmp + ".py", "w") as f:
    f.write("\n".join(script) + "\n")
subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off",
                "-ex", "set sysroot %s/sysroot" % out,
                "-ex", "set debug-file-directory %s/sysroot/usr/lib/debug" % out,
                "-x", tmp + ".py", "%s/bin/%s" % (out, name), "%s/cores/%s.core" % (out, name)],
               check=True, capture_output=True)
g = json.load(open(tmp))
funcs = [fn or (sym.split()[0] if " in section " in sym else None) for fn, sym in g["funcs"]]
smashed = [lo <= s < hi for s in slots]
assert sum(smashed) == nsmashed, (smashed, nsmashed)
assert g["smash"] == "41" * (hi - lo), "the smashed bytes are not all 0x41 in the core"
for a, s, w, sm in zip(addrs, slots, g["words"], smashed):
    assert (w == 0x4141414141414141) if sm else (w == a), \
        "slot %#x holds %#x, expected %#x" % (s, w, a)
oracle = json.load(open("oracle/%s.gdb.json" % name))
frames = next(t["frames"] for t in oracle["threads"] if t["tid"] == tid)
gdb_pcs = [int(f["pc"], 16) for f in frames]
found = [a in gdb_pcs[1:] for a in addrs]
h = lambda v: "0x%016x" % v
extra = {
    "smashed_thread": tid,
    "oracle_incomplete": True,
    "expected_return_addresses": [h(a) for a in addrs],
    "expected_return_address_functions": funcs,
    "return_address_slots": [h(s) for s in slots],
    "smashed_bytes": {"start": h(lo), "end": h(hi), "fill": "0x41"},
    "return_address_smashed": smashed,
    "gdb_finds_return_address": found,
    "gdb_backtrace": [f["function"] or f["pc"] for f in frames],
}
m = json.load(open("dumps.json"))
for e in m["dumps"]:
    if e["name"] == name:
        e.update(extra)
with open("dumps.json", "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
print("make-dumps: %s: thread %d, return addresses %s; smashed %s; gdb finds %s; gdb's bt: %s"
      % (name, tid, " ".join(extra["expected_return_addresses"]),
         smashed, found, " ".join(extra["gdb_backtrace"])))
EOF
done
# ---------------------------------------------------------------- JIT code record (jit-gdb)
# jit-gdb prints where it put its JIT code and what it registered (JIT line), and for each
# JIT thread its return addresses and their stack slots (JITSTACK / JITSLOTS lines; see
# programs/jit-gdb.c). Copy that into its dumps.json entry after checking it against the
# core with gdb: the core's JIT mapping holds the ELF's PT_LOAD segments, the registered
# symfile in the heap is the whole ELF file, the descriptor points at it, every return
# address is at its slot, gdb loaded the JIT object (objfile "<in-memory@SYMFILE_ADDR>")
# and its backtrace of each JIT thread (the oracle) has every recorded return address.
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    grep -q '^JITSTACK ' "$RUN/$name/stdout" || continue
    python3 - "$name" "$RUN/$name/stdout" "$OUT" "$ROOT/$name.jit.json" "$JIT_CODE_FLAGS" <<'EOF' || die "$name: JIT record check failed"
import json, subprocess, sys
name, stdout, out, tmp, jit_flags = sys.argv[1:]
jit, stacks, slots = None, {}, {}
for line in open(stdout):
    w = line.split()
    if w and w[0] == "JIT":
        jit = dict(zip(w[4::2], w[5::2]))
        jit["lo"], jit["hi"] = w[2], w[3]
    elif w and w[0] in ("JITSTACK", "JITSLOTS"):
        (stacks if w[0] == "JITSTACK" else slots)[int(w[1])] = [int(x, 0) for x in w[2:]]
lo, hi = int(jit["lo"], 0), int(jit["hi"], 0)
symfile, size, desc = int(jit["symfile"], 0), int(jit["size"], 0), int(jit["descriptor"], 0)
elf_path = "%s/bin/jit-gdb-code" % out
elf = open(elf_path, "rb").read()
assert len(elf) == size, "the registered symfile size is not the JIT file's"
tids = sorted(stacks)
assert len(tids) == 2 and sorted(slots) == tids
# PT_LOAD segments of the JIT file (offset, vaddr, filesz)
segs = []
for line in subprocess.run(["readelf", "-lW", elf_path], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
assert segs and lo == segs[0][1] & ~0xfff
syms = []
for line in subprocess.run(["readelf", "-sW", elf_path], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC" and f[6] not in ("UND", "ABS"):
        syms.append({"name": f[7], "address": "0x%016x" % int(f[1], 16), "size": int(f[2])})
syms.sort(key=lambda x: x["address"])
script = ["import gdb, json",
          "r = {'funcs': {}, 'words': {}, 'segs': [], 'objfiles': [o.filename for o in gdb.objfiles()]}",
          "def outer_function(pc):",
          "    name, b = None, gdb.block_for_pc(pc)",
          "    while b is not None and not b.is_global and not b.is_static:",
          "        name = b.function.name if b.function is not None else name",
          "        b = b.superblock",
          "    return name",
          "def mem(a, n):",
          "    return gdb.selected_inferior().read_memory(a, n).tobytes()",
          "def word(a):",
          "    return int.from_bytes(mem(a, 8), 'little')",
          "r['symfile'] = mem(%#x, %d).hex()" % (symfile, size),
          "r['desc'] = mem(%#x, 24).hex()" % desc,
          "r['entry'] = mem(word(%#x), 32).hex()" % (desc + 16)]
for off, vaddr, filesz in segs:
    script.append("r['segs'].append(mem(%#x, %d).hex())" % (vaddr, filesz))
for t in tids:
    script.append("r['funcs'][%d] = []; r['words'][%d] = []" % (t, t))
    for a, sl in zip(stacks[t], slots[t]):
        script.append("r['funcs'][%d].append([outer_function(%#x), gdb.execute('info symbol %#x', to_string=True)])"
                      % (t, a - 1, a - 1))
        script.append("r['words'][%d].append(word(%#x))" % (t, sl))
script.append("open(%r, 'w').write(json.dumps(r))" % tmp)
with open(tmp + ".py", "w") as f:
    f.write("\n".join(script) + "\n")
subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off",
                "-ex", "set sysroot %s/sysroot" % out,
                "-ex", "set debug-file-directory %s/sysroot/usr/lib/debug" % out,
                "-x", tmp + ".py", "%s/bin/%s" % (out, name), "%s/cores/%s.core" % (out, name)],
               check=True, capture_output=True)
g = json.load(open(tmp))
assert bytes.fromhex(g["symfile"]) == elf, "the core's symfile bytes are not the JIT file"
for (off, vaddr, filesz), got in zip(segs, g["segs"]):
    assert bytes.fromhex(got) == elf[off:off + filesz], "JIT segment at %#x differs" % vaddr
d = bytes.fromhex(g["desc"])
version, action = int.from_bytes(d[0:4], "little"), int.from_bytes(d[4:8], "little")
relevant, first = int.from_bytes(d[8:16], "little"), int.from_bytes(d[16:24], "little")
e = bytes.fromhex(g["entry"])
nxt, prev, addr, esize = (int.from_bytes(e[i:i + 8], "little") for i in range(0, 32, 8))
assert (version, action, relevant) == (1, 1, first) and (nxt, prev, addr, esize) == (0, 0, symfile, size), \
    "JIT descriptor/entry in the core: %r %r" % ((version, action, relevant, first), (nxt, prev, addr, esize))
# (gdb 13 names it "<in-memory@SYMFILE_ADDR>", older ones "<< JIT compiled code at ... >>")
jit_objfiles = [o for o in g["objfiles"] if o and (o == "<in-memory@%#x>" % symfile or "JIT" in o)]
assert jit_objfiles, "gdb loaded no JIT objfile: %r" % g["objfiles"]
oracle = json.load(open("oracle/%s.gdb.json" % name))
h = lambda v: "0x%016x" % v
funcs, found, bts = {}, {}, {}
for t in tids:
    funcs[t] = [fn or (sym.split()[0] if " in section " in sym else None) for fn, sym in g["funcs"][str(t)]]
    for a, sl, w in zip(stacks[t], slots[t], g["words"][str(t)]):
        assert w == a, "thread %d: slot %#x holds %#x, expected %#x" % (t, sl, w, a)
    assert funcs[t][:4] == ["jit_dispatch", "jit_middle", "jit_entry", "jit_thread"], funcs[t]
    frames = next(th["frames"] for th in oracle["threads"] if th["tid"] == t)
    pcs = [int(f["pc"], 16) for f in frames]
    found[t] = [a in pcs[1:] for a in stacks[t]]
    bts[t] = [f["function"] or f["pc"] for f in frames]
    assert all(found[t]), "thread %d: gdb's backtrace misses %r" % (t, found[t])
    assert all(f in bts[t] for f in ("jit_dispatch", "jit_middle", "jit_entry")), bts[t]
extra = {
    "jit_object": "bin/jit-gdb-code",
    "jit_object_source": "programs/jit-gdb-code.c",
    "jit_object_build": "gcc %s -Wall -Wextra" % jit_flags,
    "jit_load_address": h(lo),
    "jit_mapping": {"start": h(lo), "end": h(hi), "prot": "rwx", "anonymous": True},
    "jit_segments": [{"vaddr": h(v), "offset": o, "filesz": fs} for o, v, fs in segs],
    "jit_entry": h(int(jit["entry"], 0)),
    "jit_symbols": syms,
    "jit_descriptor": h(desc),
    "jit_symfile": {"address": h(symfile), "size": size},
    "gdb_jit_objfile": jit_objfiles[0],
    "jit_threads": tids,
    "expected_return_addresses": {str(t): [h(a) for a in stacks[t]] for t in tids},
    "expected_return_address_functions": {str(t): funcs[t] for t in tids},
    "return_address_slots": {str(t): [h(s) for s in slots[t]] for t in tids},
    "gdb_finds_return_address": {str(t): found[t] for t in tids},
    "gdb_backtrace": {str(t): bts[t] for t in tids},
}
m = json.load(open("dumps.json"))
for ent in m["dumps"]:
    if ent["name"] == name:
        ent.update(extra)
with open("dumps.json", "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
print("make-dumps: %s: JIT code at %s..%s (%s), symfile %s (%d bytes), gdb objfile %r"
      % (name, h(lo), h(hi), " ".join("%s@%s" % (x["name"], x["address"]) for x in syms),
         h(symfile), size, jit_objfiles[0]))
for t in tids:
    print("make-dumps: %s: thread %d: %s; gdb's bt: %s"
          % (name, t, " ".join(extra["expected_return_addresses"][str(t)]), " ".join(bts[t])))
EOF
done
# ---------------------------------------------------------------- libunwind registration record (jit-libunwind)
# jit-libunwind prints where it put its generated code and what it registered with
# _U_dyn_register (JITLU line), and for each of its two JIT threads the return addresses it
# recorded (STACK / SLOTS lines; see programs/jit-libunwind.c). Check them against the core
# with gdb: the JIT page holds the generated bytes, the FDE and the table; libunwind's
# _U_dyn_info_list (a hidden symbol: its address is from the lea in the exported
# _U_dyn_info_list_addr) has first -> info_P -> info_T -> NULL with the ranges and formats
# registered; every return address is at its slot. Copy it all into the dumps.json entry
# with gdb's backtraces (the oracle), and "oracle_incomplete" if gdb misses any of them.
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    grep -q '^JITLU ' "$RUN/$name/stdout" || continue
    python3 - "$name" "$RUN/$name/stdout" "$OUT" "$ROOT/$name.lu.json" "$ROOT/$name.core" "${LIBS_OF[$name]:-}" <<'EOF' || die "$name: libunwind record check failed"
import json, re, subprocess, sys
name, stdout, out, tmp, core, libs = sys.argv[1:]
info, stacks, slots, kinds, piformat = None, {}, {}, {}, None
for line in open(stdout):
    w = line.split()
    if w and w[0] == "JITLU":
        info = {k: w[i + 1:i + 3 if k in ("G1", "G2") else (i + 4 if k == "regions" else i + 2)]
                for i, k in enumerate(w) if k in ("page", "size", "G1", "G2", "eh_frame", "table",
                                                  "name", "list", "info_T", "info_P", "regions")}
    elif w and w[0] in ("STACK", "SLOTS"):
        (stacks if w[0] == "STACK" else slots)[int(w[2])] = [int(x, 0) for x in w[3:]]
        kinds[int(w[2])] = w[1]
    elif w and w[0] == "PIFORMAT":
        piformat = int(w[2])
I = lambda k, j=0: int(info[k][j], 0)
page, g1, g1_end, g2, g2_end = I("page"), I("G1"), I("G1", 1), I("G2"), I("G2", 1)
lst, info_t, info_p = I("list"), I("info_T"), I("info_P")
regions = [int(x, 0) for x in info["regions"]]
tid_of = {k: t for t, k in kinds.items()}
assert sorted(tid_of) == ["P", "T"] and sorted(slots) == sorted(stacks)
g1_code = bytes.fromhex("534883ec104889fbffd64883c4105bc3")
g2_code = bytes.fromhex("554889e5415448 83ec18ffd64883c418415c5dc3".replace(" ", ""))
# libunwind.so.8 as the core maps it, and _U_dyn_info_list's offset in it
maps = subprocess.run(["eu-readelf", "-n", core], capture_output=True, text=True, check=True).stdout
lu_path = lu_base = None
for line in maps.splitlines():
    f = line.split()
    if f and f[-1].endswith("/libunwind.so.8.0.1") and len(f) >= 3 and int(f[1], 16) == 0:
        lu_path, lu_base = f[-1], int(f[0].split("-")[0], 16)
        break
assert lu_path, "the core maps no libunwind.so.8.0.1"
dis = subprocess.run(["objdump", "-d", "-T", "%s/sysroot%s" % (out, lu_path)], capture_output=True,
                     text=True, check=True).stdout
m = re.search(r"<_U_dyn_info_list_addr@@Base>:\n\s*[0-9a-f]+:\s+48 8d 05 [0-9a-f ]+\s+lea\s+0x[0-9a-f]+\(%rip\),%rax\s+# ([0-9a-f]+)", dis)
assert m, "no lea in _U_dyn_info_list_addr"
list_off = int(m.group(1), 16)
assert lu_base + list_off == lst, "_U_dyn_info_list at %#x, the program said %#x" % (lu_base + list_off, lst)
script = ["import gdb, json",
          "def mem(a, n):",
          "    return gdb.selected_inferior().read_memory(a, n).tobytes()",
          "def word(a):",
          "    return int.from_bytes(mem(a, 8), 'little')",
          "r = {'words': {}}",
          "r['g1'] = mem(%#x, %d).hex()" % (g1, len(g1_code)),
          "r['g2'] = mem(%#x, %d).hex()" % (g2, len(g2_code)),
          "r['list'] = mem(%#x, 16).hex()" % lst,
          "r['info_T'] = mem(%#x, 88).hex()" % info_t,
          "r['info_P'] = mem(%#x, 88).hex()" % info_p,
          "r['table'] = mem(%#x, 8).hex()" % I("table"),
          "r['eh_frame'] = mem(%#x, 64).hex()" % I("eh_frame"),
          "r['name'] = mem(%#x, 13).hex()" % I("name"),
          "r['regions'] = [mem(a, 16).hex() for a in %r]" % regions,
          "r['r1ops'] = mem(%#x, 7 * 16).hex()" % (regions[0] + 16)]
for t in stacks:
    script.append("r['words'][%d] = [word(a) for a in %r]" % (t, slots[t]))
script.append("open(%r, 'w').write(json.dumps(r))" % tmp)
with open(tmp + ".py", "w") as f:
    f.write("\n".join(script) + "\n")
subprocess.run(["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off",
                "-ex", "set sysroot %s/sysroot" % out, "-x", tmp + ".py",
                "%s/bin/%s" % (out, name), "%s/cores/%s.core" % (out, name)],
               check=True, capture_output=True)
g = json.load(open(tmp))
q = lambda b, o: int.from_bytes(b[o:o + 8], "little")
l32 = lambda b, o: int.from_bytes(b[o:o + 4], "little", signed=True)
assert bytes.fromhex(g["g1"]) == g1_code and bytes.fromhex(g["g2"]) == g2_code, "generated code differs"
assert bytes.fromhex(g["name"]) == b"jit_frame_fn\0"
L = bytes.fromhex(g["list"])
assert q(L, 8) == info_p, "_U_dyn_info_list.first = %#x, not info_P %#x" % (q(L, 8), info_p)
P, T = bytes.fromhex(g["info_P"]), bytes.fromhex(g["info_T"])
# unw_dyn_info_t: next prev start_ip end_ip gp format(int32) pad load_offset u...
assert (q(P, 0), q(P, 16), q(P, 24), l32(P, 40)) == (info_t, g2, g2_end, 0), "info_P"
assert (q(T, 0), q(T, 8), q(T, 16), q(T, 24), l32(T, 40)) == (0, info_p, g1, g1_end, 2), "info_T"
assert (q(P, 56), q(P, 72) & 0xffffffff, q(P, 80)) == (I("name"), 0, regions[0]), "info_P.u.pi"
assert (q(T, 64), q(T, 72), q(T, 80)) == (page, 1, I("table")), "info_T.u.rti"
tab = bytes.fromhex(g["table"])
assert (l32(tab, 0), l32(tab, 4)) == (g1 - page, l32(tab, 4)) and l32(tab, 4) > 0
R = [bytes.fromhex(x) for x in g["regions"]]
assert [q(r, 0) for r in R] == regions[1:] + [0]
assert [(l32(r, 8), l32(r, 12)) for r in R] == [(10, 7), (2, 1), (-8, 1)], "regions"
ops = bytes.fromhex(g["r1ops"])
op_list = [(ops[i * 16], ops[i * 16 + 1], int.from_bytes(ops[i * 16 + 2:i * 16 + 4], "little", signed=True),
            l32(ops, i * 16 + 4), int.from_bytes(ops[i * 16 + 8:i * 16 + 16], "little", signed=True))
           for i in range(7)]
tags = ["STOP", "SAVE_REG", "SPILL_FP_REL", "SPILL_SP_REL", "ADD"]
for t in stacks:
    for a, sl, w in zip(stacks[t], slots[t], g["words"][str(t)]):
        assert w == a, "thread %d: slot %#x holds %#x, expected %#x" % (t, sl, w, a)
assert g1 <= stacks[tid_of["T"]][0] < g1_end and g2 <= stacks[tid_of["P"]][0] < g2_end
oracle = json.load(open("oracle/%s.gdb.json" % name))
h = lambda v: "0x%016x" % v
found, bts, right = {}, {}, {}
for t in stacks:
    frames = next(th["frames"] for th in oracle["threads"] if th["tid"] == t)
    pcs = [int(f["pc"], 16) for f in frames]
    found[t] = [a in pcs[1:] for a in stacks[t]]
    bts[t] = [f["function"] or f["pc"] for f in frames]
    # gdb is right for a thread only if the frames after the callback are exactly the record
    cb = next((k for k, f in enumerate(frames) if f["function"] in ("t_callback", "p_callback")), None)
    right[t] = cb is not None and pcs[cb + 1:] == stacks[t]
pkg = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libunwind8:amd64"], capture_output=True, text=True).stdout.strip()
tids = sorted(stacks)
extra = {
    "build": "gcc -O2 -g -Wall -Wextra -pthread ... %s" % libs,
    "libunwind_package": {"libunwind8": pkg, "libunwind-dev": pkg},
    "libunwind_library": lu_path,
    "libunwind_load_address": h(lu_base),
    "dyn_info_list": {"symbol": "_U_dyn_info_list", "address": h(lst), "offset_in_library": h(list_off),
                      "first": h(info_p), "note": "hidden symbol (no .symtab in the Debian library): address from the lea in the exported _U_dyn_info_list_addr"},
    "jit_mapping": {"start": h(page), "end": h(page + int(info["size"][0])), "prot": "rwx", "anonymous": True},
    "jit_threads": {str(tid_of["T"]): "T", str(tid_of["P"]): "P"},
    "jit_code": {
        "T": {"tid": tid_of["T"], "format": "remote-table", "unw_info_format": 2,
              "unw_info_format_name": "UNW_INFO_FORMAT_REMOTE_TABLE",
              "dyn_info": h(info_t), "start_ip": h(g1), "end_ip": h(g1_end), "bytes": g1_code.hex(),
              "segbase": h(page), "table": h(I("table")), "table_len_words": 1,
              "table_entries": [[l32(tab, 0), l32(tab, 4)]], "eh_frame": h(I("eh_frame")),
              "fde": h(page + l32(tab, 4)), "libunwind_proc_info_format": piformat,
              "note": "UNW_INFO_FORMAT_TABLE (1) is not usable for this: libunwind's x86-64 local unwinder reads u.ti.table_data of a format-1 entry as its internal struct unw_debug_frame_list (.debug_frame), so unw_backtrace stopped at G1; with format 2 and the same u.rti layout (segbase, table_len in words, table_data -> {int32 start_ip_offset, int32 fde_offset} relative to segbase, .eh_frame CIE/FDE) it unwinds through G1"},
        "P": {"tid": tid_of["P"], "format": "proc-info", "unw_info_format": 0,
              "unw_info_format_name": "UNW_INFO_FORMAT_DYNAMIC",
              "dyn_info": h(info_p), "start_ip": h(g2), "end_ip": h(g2_end), "bytes": g2_code.hex(),
              "name": "jit_frame_fn", "name_ptr": h(I("name")),
              "regions": [{"address": h(a), "insn_count": l32(r, 8), "op_count": l32(r, 12)} for a, r in zip(regions, R)],
              "prologue_ops": [{"tag": tags[o[0]], "qp": o[1], "reg": o[2], "when": o[3], "val": o[4]} for o in op_list],
              "units": "insn_count and when count bytes; when = offset of the end of the instruction within its region"},
    },
    "expected_return_addresses": {str(t): [h(a) for a in stacks[t]] for t in tids},
    "return_address_slots": {str(t): [h(s) for s in slots[t]] for t in tids},
    "gdb_finds_return_address": {str(t): found[t] for t in tids},
    "gdb_backtrace": {str(t): bts[t] for t in tids},
    "gdb_backtrace_correct": {str(t): right[t] for t in tids},
}
if not all(right.values()):
    extra["oracle_incomplete"] = True
m = json.load(open("dumps.json"))
for ent in m["dumps"]:
    if ent["name"] == name:
        extra["build"] = ent["build"] + " " + libs
        ent.update(extra)
with open("dumps.json", "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
print("make-dumps: %s: _U_dyn_info_list %s -> P %s -> T %s; G1 %s..%s G2 %s..%s"
      % (name, h(lst), h(info_p), h(info_t), h(g1), h(g1_end), h(g2), h(g2_end)))
for t in tids:
    print("make-dumps: %s: thread %d (%s): %s; gdb finds %s; gdb's bt: %s"
          % (name, t, kinds[t], " ".join(extra["expected_return_addresses"][str(t)]), found[t], " ".join(bts[t])))
EOF
done
echo "make-dumps: done; test/dumps is $(du -sh --exclude=.git "$HERE" | cut -f1)"
