#!/bin/bash
# make-dumps.sh: rebuild the Windows test programs and recapture every minidump under Wine.
#
#   test/dumps/windows/make-dumps.sh           everything, from scratch
#   test/dumps/windows/make-dumps.sh NAME...   only those dumps (the others' files and
#                                              dumps.json entries stay as they are)
#
# Builds with Debian's MinGW-w64 (x86_64-w64-mingw32-gcc/g++, -static, -gdwarf-4) in the fixed
# directory /tmp/stackwalk-windows-dumps (sources copied to .../src and compiled there with
# relative names; executables in .../bin), so the paths recorded in the dumps and in the DWARF
# are the same on every run. pdb-threads is the exception: clang-19 + lld-19 (MinGW target,
# same MinGW-w64 libraries), CodeView in a PDB; its PDB goes to symbols-flat/ and, in
# Microsoft symbol-store layout, to symbols/. Every capture starts a fresh wineserver on a
# fixed WINEPREFIX (.../wineprefix, made once with wineboot), so the process and thread ids,
# the load addresses and the stacks come out the same from one run to the next.
#
# For each program: run it under wine, wait for its READY lines (one per parked thread) and
# one more second for the threads to settle, then
#   live programs:  winedbg --minidump NAME.dmp PID          (the dump)
#   crash-av:       the dump its own unhandled-exception filter wrote with MiniDumpWriteDump
#                   (Wine's dbghelp), with the exception pointers; the filter then blocks
# and in both cases  winedbg: attach PID / bt all / detach    (the oracle, raw text), plus for
# crash-av `winedbg NAME.dmp`, which prints the exception thread's backtrace from the dump.
# The raw text is cut to the sections of the captured process and converted to JSON (the
# format /work/shared/oracle/compare.py reads). The capture logic is the one of
# /work/shared/oracle/wine-dump.sh, copied here so this script stands alone; the differences
# are listed in README.md.
#
# Then it replaces, under test/dumps/windows: dumps/*.dmp.xz, bin/*.exe.xz, system32/*.dll.xz
# (the Wine builtin DLLs that some captured thread's stack passes through, from
# /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/), oracle/*.winedbg.{txt,json}, dumps.json.
#
# Needs: wine64 + wine (winedbg), gcc-mingw-w64-x86-64, g++-mingw-w64-x86-64, xz-utils,
# python3. Runs as any user (Wine refuses a WINEPREFIX owned by another user).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=/tmp/stackwalk-windows-dumps
SRC=$ROOT/src
BIN=$ROOT/bin
RUN=$ROOT/run
WINEDLLDIR=/usr/lib/x86_64-linux-gnu/wine/x86_64-windows
XZ="xz -9e -T1 --check=crc64"
CFLAGS_COMMON="-gdwarf-4 -Wall -Wextra -static -Wl,--no-insert-timestamp -Wl,--build-id"
# Dumps whose compiler is clang-*: CodeView in a PDB (lld's MinGW mode). Compiled and linked
# in two steps, so the object file has a fixed name (the PDB records it, and lld's GUID is a
# hash of the PDB's contents: the same build gives the same GUID). With --pdb, lld's
# --strip-all means -debug:nodwarf,nosymtab: the executable has neither the MinGW libraries'
# DWARF nor a COFF symbol table, as an MSVC build (the PDB has the program's CodeView and the
# publics of every object's external symbols); the RSDS record names the PDB as Wine sees it,
# next to the executable (-pdbaltpath).
# NAME is replaced by the dump's name.
CLANG_PDB_CFLAGS="--target=x86_64-w64-windows-gnu -gcodeview -g -Wall -Wextra -Wno-unknown-attributes"
CLANG_PDB_LDFLAGS="--target=x86_64-w64-windows-gnu -fuse-ld=lld -static -Wl,--no-insert-timestamp -Wl,--strip-all -Wl,-Xlink=-pdbaltpath:Z:\\tmp\\stackwalk-windows-dumps\\bin\\NAME.pdb -Wl,--pdb=$BIN/NAME.pdb"

export WINEPREFIX=$ROOT/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" WINEARCH=win64
unset DISPLAY WAYLAND_DISPLAY || true

# name | source | compiler | flags (besides CFLAGS_COMMON) | READY lines | capture | what it shows
DUMPS=(
"threads-O0|threads.c|x86_64-w64-mingw32-gcc|-O0|6|live|Six threads parked in different kernelbase/ntdll waits, each 3-6 frames deep in the program: WaitForMultipleObjects (main), WaitForSingleObject (waiter), Sleep(INFINITE) under a 5-deep recursion (sleeper), ReadFile on an empty pipe (reader), SleepEx(INFINITE, TRUE) (alertable), EnterCriticalSection on a lock main holds (locker). C, -O0: every function keeps %rbp as frame pointer (UWOP_SET_FPREG)."
"threads-O2|threads.c|x86_64-w64-mingw32-gcc|-O2|6|live|The same six threads at -O2 (no frame pointers; PUSH_NONVOL/ALLOC_SMALL prologs); the reader's static inline helpers reader_outer/reader_middle are inlined into reader_thread, so its call to reader_inner sits in a DWARF inline chain."
"unwind-codes|unwind-codes.c|x86_64-w64-mingw32-gcc|-O2|6|live|Threads parked under functions with particular unwind info: a 64 KiB and a 640 KiB frame (___chkstk_ms; UWOP_ALLOC_LARGE, 16-bit and 32-bit forms), a frame-pointer function that alloca()s (UWOP_SET_FPREG), a function saving xmm6-xmm8 (UWOP_SAVE_XMM128); two threads spinning (pause loop) in leaves: one written in assembly with no .pdata entry at all, one a C leaf whose unwind info has no codes. Frame 0 of those two is in the program, not in ntdll."
"cxx-throw|cxx-throw.cpp|x86_64-w64-mingw32-g++|-O2|5|live|C++ exceptions in flight (SEH model): a destructor blocked in a cleanup landing pad; a std::terminate handler blocked under __cxa_call_terminate <- __gxx_personality_imp <- _GCC_specific_handler <- __gxx_personality_seh0 <- ntdll call_handler/call_stack_handlers/dispatch_exception <- RtlRaiseException (assembly, no DWARF) <- RaiseException <- _Unwind_RaiseException <- __cxa_throw (throw through a noexcept frame; GCC's personality calls terminate already in phase 1); a language-specific handler (.seh_handler) blocked while RtlUnwindEx calls it in phase 2 (call_unwind_handler/RtlUnwindEx <- _GCC_specific_handler <- ... <- RtlRaiseException <- RaiseException <- __cxa_throw). The libgcc/libstdc++ frames have no DWARF (winedbg shows no name; the COFF symbol table has them); a thread blocked inside a catch block."
"cxx-names-O0|cxx-names.cpp|x86_64-w64-mingw32-g++|-O0|4|live|C++ names at -O0: app::Runner::run/wait_all, a virtual app::Worker<int>::run / Worker<double>::run, the recursive member template Worker<T>::descend<3..0>, a lambda inside descend<0>, app::Counter::operator+=, functions in app::detail."
"crash-av|crash-av.c|x86_64-w64-mingw32-gcc|-O2 -ldbghelp|3|crash|An access violation (write to 0x10) in a secondary thread under process_records -> apply_record -> store_value; the program's SetUnhandledExceptionFilter filter wrote the dump with MiniDumpWriteDump (Wine's dbghelp) and the exception pointers, so it has an Exception stream and the crashing thread's context is the fault's. Two other threads parked."
"pdb-threads|pdb-threads.c|clang-19|-O1|4|live|Symbols in a PDB, not DWARF: built by clang-19 for x86_64-w64-windows-gnu with -gcodeview and linked by lld (MinGW mode, --pdb, --strip-all: no DWARF and no COFF symbol table in the executable; its RSDS debug directory entry names the PDB and carries its GUID/age; the MinGW CRT's functions are only PDB publics, and the static __tmainCRTStartup is in neither). C, -O1, no frame pointers. Four threads parked: main in WaitForMultipleObjects (pdb_main_wait -> pdb_main_wait_inner), waiter in WaitForSingleObject (pdb_waiter_thread -> level1 -> level2 -> level3), sleeper in Sleep(INFINITE) (pdb_sleeper_thread -> pdb_sleep_middle -> pdb_sleep_forever), reader in ReadFile on an empty pipe (pdb_reader_thread -> top -> outer -> middle -> inner)."
)

field() { local IFS='|'; local -a f; read -r -a f <<<"$2"; printf '%s' "${f[$1]}"; }
die() { echo "make-dumps: $*" >&2; exit 1; }
# The symbol-store directory name of an executable's PDB: its RSDS GUID as 32 upper-case hex
# digits (Data1 Data2 Data3 Data4, as llvm-readobj prints it without the dashes) + the age
# in hex without padding.
pdb_store_id() {
    llvm-readobj-19 --coff-debug-directory "$1" | awk '
        $1 == "PDBGUID:" { g = $2; gsub(/[{}-]/, "", g) }
        $1 == "PDBAge:" { a = $2 }
        END { if (g == "" || a == "") exit 1; printf "%s%X\n", toupper(g), a }'
}

for tool in x86_64-w64-mingw32-gcc x86_64-w64-mingw32-g++ wine winedbg wineserver wineboot xz python3; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
done

ALL=("${DUMPS[@]}")
PARTIAL=
if [[ $# -gt 0 ]]; then
    PARTIAL=1
    sel=()
    for want in "$@"; do
        found=
        for d in "${ALL[@]}"; do [[ $(field 0 "$d") == "$want" ]] && { sel+=("$d"); found=1; }; done
        [[ -n $found ]] || die "no dump named $want"
    done
    DUMPS=("${sel[@]}")
fi

wineserver -k 2>/dev/null || true
if [[ -z $PARTIAL ]]; then rm -rf "$ROOT"; fi
mkdir -p "$SRC" "$BIN" "$RUN"
cp "$HERE"/programs/*.c "$HERE"/programs/*.cpp "$HERE"/programs/*.h "$SRC"/
if [[ ! -f $WINEPREFIX/system.reg ]]; then
    wineboot -i >"$ROOT/wineboot.log" 2>&1 || die "wineboot failed: see $ROOT/wineboot.log"
    wineserver -w
fi

# ---------------------------------------------------------------- build
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d"); src=$(field 1 "$d"); cc=$(field 2 "$d"); flags=$(field 3 "$d")
    if [[ $cc == clang-* ]]; then
        # (clang-19 + lld-19: apt-get install clang-19 lld-19)
        for tool in "$cc" llvm-readobj-19 llvm-pdbutil-19; do
            command -v "$tool" >/dev/null || die "missing tool: $tool (for $name)"
        done
        rm -f "$BIN/$name.pdb"
        # shellcheck disable=SC2086
        (cd "$SRC" && $cc $CLANG_PDB_CFLAGS $flags -c -o "$name.o" "$src" &&
            $cc ${CLANG_PDB_LDFLAGS//NAME/$name} -o "$BIN/$name.exe" "$name.o") || die "build of $name failed"
        [[ -s $BIN/$name.pdb ]] || die "build of $name wrote no PDB"
        # The executable's RSDS record and the PDB's info stream must agree (GUID, age).
        exe_id=$(pdb_store_id "$BIN/$name.exe") || die "$name.exe: no RSDS debug directory entry"
        pdb_id=$(llvm-pdbutil-19 dump -summary "$BIN/$name.pdb" | awk '
            $1 == "GUID:" { g = $2; gsub(/[{}-]/, "", g) } $1 == "Age:" { a = $2 }
            END { printf "%s%X\n", toupper(g), a }')
        [[ $exe_id == "$pdb_id" ]] || die "$name: the executable names PDB $exe_id, the PDB is $pdb_id"
        echo "make-dumps: $name: PDB $name.pdb, symbol-store id $exe_id"
    else
        # shellcheck disable=SC2086
        (cd "$SRC" && $cc $CFLAGS_COMMON -o "$BIN/$name.exe" "$src" $flags) || die "build of $name failed"
    fi
done
echo "make-dumps: built $(ls "$BIN" | wc -l) programs in $BIN"

# ---------------------------------------------------------------- capture
# winedbg prints every process of the wineserver for "bt all": keep the captured one's.
cut_sections() { # raw pid(hex) -> stdout
    python3 - "$1" "$2" <<'PY'
import re, sys
text, pid = open(sys.argv[1], errors="replace").read(), int(sys.argv[2], 16)
keep, out = False, []
for line in text.splitlines():
    m = re.match(r"(?:Wine-dbg>)*\s*Backtracing for thread ([0-9a-f]+) in process ([0-9a-f]+)", line)
    if m:
        keep = int(m.group(2), 16) == pid
        line = line[line.index("Backtracing"):]
        out.append("")
    elif re.match(r"^(Wine-dbg>)+\s*$", line) or line.startswith("0x") and " ret" in line:
        keep = keep and not line.startswith("Wine-dbg>")
        continue
    if keep:
        out.append(line)
print("\n".join(out).strip("\n"))
PY
}

capture() {
    local name=$1 ready=$2 kind=$3 dir=$RUN/$1 runner wpid i
    rm -rf "$dir"; mkdir -p "$dir"
    wineserver -k 2>/dev/null || true
    wineserver -w 2>/dev/null || true
    (cd "$dir" && exec wine "$BIN/$name.exe" >"$dir/stdout" 2>"$dir/stderr") &
    runner=$!
    for i in $(seq 1 600); do
        [[ $(grep -c '^READY' "$dir/stdout" 2>/dev/null || true) -ge $ready ]] && break
        kill -0 "$runner" 2>/dev/null || break
        sleep 0.1
    done
    [[ $(grep -c '^READY' "$dir/stdout" || true) -ge $ready ]] ||
        { kill "$runner" 2>/dev/null; wineserver -k; die "$name never printed $ready READY lines (see $dir)"; }
    sleep 1
    wpid=$(echo "info process" | winedbg 2>/dev/null | awk -v n="'$name.exe'" '$NF==n {print $1; exit}')
    [[ -n $wpid ]] || { kill "$runner"; wineserver -k; die "no Wine process named $name.exe"; }
    echo "$wpid" >"$dir/wpid"
    if [[ $kind == live ]]; then
        winedbg --minidump "$dir/$name.dmp" "0x$wpid" >"$dir/minidump.log" 2>&1 || true
    fi
    [[ -s $dir/$name.dmp ]] || { kill "$runner"; wineserver -k; die "$name: no minidump"; }
    # (from a fixed directory: the builtin DLLs' DWARF has relative source paths, which
    # winedbg prints resolved against its current directory)
    (cd "$ROOT" && printf 'attach 0x%s\nbt all\ndetach\nquit\n' "$wpid" | winedbg >"$dir/bt-all.raw" 2>"$dir/bt-all.stderr") || true
    if [[ $kind == crash ]]; then
        # winedbg on a minidump prints the exception thread's backtrace from the dump itself.
        (cd "$ROOT" && printf 'quit\n' | winedbg "run/$name/$name.dmp" >"$dir/dump-bt.raw" 2>&1) || true
    fi
    kill "$runner" 2>/dev/null || true
    wineserver -k 2>/dev/null || true
    wait "$runner" 2>/dev/null || true
    cut_sections "$dir/bt-all.raw" "$wpid" >"$dir/$name.winedbg.txt"
    echo "make-dumps: $name: pid 0x$wpid, $(grep -c '^READY' "$dir/stdout") ready lines, dump $(stat -c %s "$dir/$name.dmp") bytes"
}

for d in "${DUMPS[@]}"; do
    capture "$(field 0 "$d")" "$(field 4 "$d")" "$(field 5 "$d")"
done

# ---------------------------------------------------------------- oracle JSON + checks
# winedbg frame lines:  "=>0 0x... func+0xoff(args) [file:line] in module (frame)" or
# "  3 0x... in module (+0xoff) (frame)".
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    python3 - "$RUN/$name" "$name" "$(field 5 "$d")" <<'PY' || die "$name: oracle check failed"
import json, re, sys
dirn, name, kind = sys.argv[1:]
wpid = int(open(f"{dirn}/wpid").read(), 16)
FRAME = re.compile(r"^\s*(?:=>)?\s*(\d+)\s+0x([0-9a-f]+)\s+(?:(.*?)\s+)?in\s+(\S+)\s+\((?:\+0x[0-9a-f]+\)\s+\()?[0-9a-fx]+\)\s*$")
def split_rest(rest):
    """'name+0xoff(args) [file:line]' -> (name, file, line); the argument list is the last
    balanced parenthesized group (names may hold parentheses: operator(), {lambda(...)#1})."""
    file = lineno = None
    m = re.search(r"\s+\[(.*):(\d+)\]$", rest)
    if m:
        file, lineno, rest = m.group(1), int(m.group(2)), rest[:m.start()]
    if not rest.endswith(")"):
        return None, file, lineno
    depth = 0
    for i in range(len(rest) - 1, -1, -1):
        if rest[i] == ")":
            depth += 1
        elif rest[i] == "(":
            depth -= 1
            if depth == 0:
                break
    name = re.sub(r"\+0x[0-9a-f]+$", "", rest[:i])
    return name or None, file, lineno
def parse(text, want_pid=None):
    threads, cur = [], None
    for line in text.splitlines():
        m = re.match(r"Backtracing for thread ([0-9a-f]+) in process ([0-9a-f]+)", line)
        if m:
            cur = None
            if want_pid is None or int(m.group(2), 16) == want_pid:
                cur = {"tid": int(m.group(1), 16), "frames": []}
                threads.append(cur)
            continue
        if line.startswith("Backtrace:") and want_pid is None and cur is None:
            cur = {"tid": None, "frames": []}; threads.append(cur); continue
        m = FRAME.match(line)
        if m and cur is not None:
            pc, rest, module = int(m.group(2), 16), m.group(3) or "", m.group(4)
            fn, file, lineno = split_rest(rest) if rest else (None, None, None)
            cur["frames"].append({"pc": "0x%016x" % pc, "function": fn, "inlined": False,
                                  "file": file, "line": lineno, "module": module})
    # winedbg does not mark inline frames. In a run of frames with the same pc, the last is
    # the physical frame and the ones before it are inlined into it, except frames of the
    # same function as that last one: those are recursion (each a physical frame whose
    # return address is the same), as in threads' sleep_recursive.
    for t in threads:
        fr = t["frames"]
        i = 0
        while i < len(fr):
            j = i
            while j + 1 < len(fr) and fr[j + 1]["pc"] == fr[i]["pc"]:
                j += 1
            for k in range(i, j):
                fr[k]["inlined"] = fr[k]["function"] != fr[j]["function"]
            i = j + 1
    return threads
threads = parse(open(f"{dirn}/{name}.winedbg.txt").read(), wpid)
# The thread winedbg injects to break in (DbgUiRemoteBreakin) is a new one at each attach:
# the one in the dump is not the one in this backtrace. Drop it.
breakin = [t for t in threads if any(f["function"] == "DbgUiRemoteBreakin" for f in t["frames"])]
threads = [t for t in threads if t["frames"] and t not in breakin]
ready = {}
for line in open(f"{dirn}/stdout"):
    m = re.match(r"READY (\S+) tid=(\d+)", line)
    if m:
        ready[int(m.group(2))] = m.group(1)
problems = []
for t in threads:
    t["role"] = ready.get(t["tid"])
    fr = t["frames"]
    if t["role"] is None:
        problems.append(f"thread {t['tid']:#x} printed no READY line")
    if not fr or fr[-1]["function"] != "RtlUserThreadStart":
        problems.append(f"thread {t['tid']:#x} ({t['role']}): backtrace does not end in RtlUserThreadStart")
    if not any(f["module"].lower() == name.lower() and f["function"] for f in fr):
        problems.append(f"thread {t['tid']:#x} ({t['role']}): no named frame in {name}")
if set(ready) - {t["tid"] for t in threads}:
    problems.append("READY threads missing from winedbg's backtrace: %s" % sorted(set(ready) - {t["tid"] for t in threads}))
out = {"threads": [{"tid": t["tid"], "frames": t["frames"]} for t in threads]}
meta = {"roles": {str(t["tid"]): t["role"] for t in threads},
        "breakin_tids_in_backtrace": [t["tid"] for t in breakin]}
if kind == "crash":
    # The dump's crashing thread context is the fault's; the live backtrace shows the
    # filter above KiUserExceptionDispatcher. winedbg on the dump prints the exception
    # thread's backtrace from the dump: keep it as that thread's oracle.
    raw = open(f"{dirn}/dump-bt.raw", errors="replace").read()
    sect = raw.split("Backtrace:", 1)[1].split("WineDbg starting on pid", 1)[0] if "Backtrace:" in raw else ""
    open(f"{dirn}/{name}.winedbg-dump.txt", "w").write("Backtrace:" + sect.rstrip() + "\n")
    dt = parse("Backtrace:" + sect)
    crashed = [tid for tid, role in ready.items() if role == "crashed"]
    if not dt or not dt[0]["frames"] or not crashed:
        problems.append("no backtrace of the exception thread from the dump")
    else:
        for t in out["threads"]:
            if t["tid"] == crashed[0]:
                meta["live_crashed_thread_frames"] = t["frames"]
                t["frames"] = dt[0]["frames"]
                t["from_dump"] = True
json.dump(out, open(f"{dirn}/{name}.winedbg.json", "w"), indent=1)
json.dump(meta, open(f"{dirn}/meta.json", "w"), indent=1)
for p in problems:
    print(f"make-dumps: {name}: {p}", file=sys.stderr)
print(f"make-dumps: {name}: oracle {len(out['threads'])} threads, {sum(len(t['frames']) for t in out['threads'])} frames")
sys.exit(1 if problems else 0)
PY
done

# ---------------------------------------------------------------- commit tree
cd "$HERE"
[[ -n $PARTIAL ]] || rm -rf dumps bin system32 oracle symbols symbols-flat
mkdir -p dumps bin system32 oracle
for d in "${DUMPS[@]}"; do
    name=$(field 0 "$d")
    $XZ -c "$RUN/$name/$name.dmp" >"dumps/$name.dmp.xz"
    $XZ -c "$BIN/$name.exe" >"bin/$name.exe.xz"
    cp "$RUN/$name/$name.winedbg.txt" "$RUN/$name/$name.winedbg.json" oracle/
    [[ -f $RUN/$name/$name.winedbg-dump.txt ]] && cp "$RUN/$name/$name.winedbg-dump.txt" oracle/
    if [[ $(field 2 "$d") == clang-* ]]; then
        # The PDB twice: flat (symbols-flat/NAME.pdb) and in Microsoft symbol-store layout
        # (symbols/NAME.pdb/<GUID><age>/NAME.pdb).
        id=$(pdb_store_id "$BIN/$name.exe")
        rm -rf "symbols/$name.pdb"
        mkdir -p "symbols/$name.pdb/$id" symbols-flat
        $XZ -c "$BIN/$name.pdb" >"symbols-flat/$name.pdb.xz"
        cp "symbols-flat/$name.pdb.xz" "symbols/$name.pdb/$id/$name.pdb.xz"
    fi
done
# The builtin DLLs any oracle thread passes through (from every dump's oracle, so a partial
# run keeps the others' DLLs).
python3 - "$BIN" oracle/*.winedbg.json <<'PY' >"$ROOT/dlls.txt"
import json, sys
mods = set()
for p in sys.argv[2:]:
    for t in json.load(open(p))["threads"]:
        mods.update(f["module"] for f in t["frames"] if f.get("module"))
for m in sorted(mods):
    print(m)
PY
rm -f system32/*.dll.xz
while read -r mod; do
    # (winedbg prints module names in lower case: the programs themselves are not DLLs)
    ls "$BIN" | tr '[:upper:]' '[:lower:]' | grep -qxF "$mod.exe" && continue
    f=$WINEDLLDIR/$mod.dll
    [[ -f $f ]] || die "module $mod on a stack is not in $WINEDLLDIR"
    $XZ -c "$f" >"system32/$mod.dll.xz"
done <"$ROOT/dlls.txt"

# ---------------------------------------------------------------- manifest
printf '%s\n' "${ALL[@]}" >"$ROOT/dumps.txt"
printf '%s\n' "${DUMPS[@]}" >"$ROOT/dumps-selected.txt"
python3 - "$ROOT" "$PARTIAL" "$CFLAGS_COMMON" "$CLANG_PDB_CFLAGS" "$CLANG_PDB_LDFLAGS" <<'PY'
import json, os, re, struct, subprocess, sys
root, partial, common, clang_cflags, clang_ldflags = sys.argv[1:]
old = json.load(open("dumps.json")) if partial and os.path.exists("dumps.json") else {"dumps": []}
old_entries = {e["name"]: e for e in old["dumps"]}

def minidump(path):
    d = open(path, "rb").read()
    sig, ver, n, rva = struct.unpack_from("<IIII", d, 0)
    streams = {}
    for i in range(n):
        st, size, srva = struct.unpack_from("<III", d, rva + 12 * i)
        streams.setdefault(st, (size, srva))
    def string(r):
        (k,) = struct.unpack_from("<I", d, r)
        return d[r + 4:r + 4 + k].decode("utf-16-le")
    info = {"streams": sorted(streams)}
    size, r = streams[3]
    (k,) = struct.unpack_from("<I", d, r)
    info["thread_ids"] = [struct.unpack_from("<I", d, r + 4 + 48 * i)[0] for i in range(k)]
    size, r = streams[4]
    (k,) = struct.unpack_from("<I", d, r)
    mods = []
    for i in range(k):
        base, msize, cks, stamp, name_rva = struct.unpack_from("<QIIII", d, r + 4 + 108 * i)
        mods.append({"name": string(name_rva), "base": "0x%016x" % base, "size": msize,
                     "time_date_stamp": "0x%08x" % stamp, "checksum": "0x%08x" % cks})
        cv_size, cv_rva = struct.unpack_from("<II", d, r + 4 + 108 * i + 76)
        cv = d[cv_rva:cv_rva + cv_size] if cv_size else b""
        info.setdefault("codeview", {})[string(name_rva)] = rsds(cv) if cv[:4] == b"RSDS" else \
            ({"type": cv[:4].decode("latin-1")} if cv else None)
    info["modules"] = mods
    if 6 in streams:
        size, r = streams[6]
        tid, _, code, flags, rec, addr, np = struct.unpack_from("<IIIIQQI", d, r)
        params = struct.unpack_from("<15Q", d, r + 40)[:np]
        info["exception"] = {"thread_id": tid, "code": "0x%08x" % code, "address": "0x%016x" % addr,
                             "parameters": ["0x%x" % p for p in params]}
    return info


def pe_exports(path):
    """(rva, name) of a PE file's named exports."""
    d = open(path, "rb").read()
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    nsect, opt_size = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
    opt = pe + 24
    exp_rva, exp_size = struct.unpack_from("<II", d, opt + 112)      # PE32+ data directory 0
    sects = [struct.unpack_from("<IIII", d, opt + opt_size + 40 * i + 8) for i in range(nsect)]
    def off(rva):
        for vsize, va, rawsize, raw in sects:
            if va <= rva < va + max(vsize, rawsize):
                return raw + rva - va
        raise ValueError(rva)
    if not exp_rva:
        return []
    e = off(exp_rva)
    nfun, nnames, funcs, names, ords = struct.unpack_from("<IIIII", d, e + 20)
    res = []
    for i in range(nnames):
        name_rva = struct.unpack_from("<I", d, off(names) + 4 * i)[0]
        o = off(name_rva)
        name = d[o:d.index(b"\0", o)].decode()
        ordinal = struct.unpack_from("<H", d, off(ords) + 2 * i)[0]
        rva = struct.unpack_from("<I", d, off(funcs) + 4 * ordinal)[0]
        if not (exp_rva <= rva < exp_rva + exp_size):              # not a forwarder
            res.append((rva, name))
    return res

def rsds(cv):
    """An RSDS CodeView record -> its GUID (registry form), age, PDB path, symbol-store id."""
    g = cv[4:20]
    d1, d2, d3 = struct.unpack_from("<IHH", g)
    guid = "%08X-%04X-%04X-%s-%s" % (d1, d2, d3, g[8:10].hex().upper(), g[10:16].hex().upper())
    (age,) = struct.unpack_from("<I", cv, 20)
    path = cv[24:cv.index(b"\0", 24)].decode("utf-8")
    return {"type": "RSDS", "guid": guid, "age": age, "path": path,
            "symbol_store_id": guid.replace("-", "") + "%X" % age}

def pe_codeview(path):
    """The RSDS record of a PE file's CodeView debug directory entry, or None."""
    d = open(path, "rb").read()
    pe = struct.unpack_from("<I", d, 0x3C)[0]
    nsect, opt_size = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
    opt = pe + 24
    dbg_rva, dbg_size = struct.unpack_from("<II", d, opt + 112 + 8 * 6)   # data directory 6
    sects = [struct.unpack_from("<IIII", d, opt + opt_size + 40 * i + 8) for i in range(nsect)]
    def off(rva):
        for vsize, va, rawsize, raw in sects:
            if va <= rva < va + max(vsize, rawsize):
                return raw + rva - va
        raise ValueError(rva)
    if not dbg_rva:
        return None
    for e in range(off(dbg_rva), off(dbg_rva) + dbg_size, 28):
        typ, size, _, ptr = struct.unpack_from("<12xIIII", d, e)
        if typ == 2 and d[ptr:ptr + 4] == b"RSDS":
            return rsds(d[ptr:ptr + size])
    return None

SYMS = {}
def symbols(module, modules):
    """(address, name) of the functions of a module: the program's COFF symbols (nm), a
    builtin DLL's exports (objdump -p), at the base the dump records."""
    if module in SYMS:
        return SYMS[module]
    res = []
    rec = next((m for m in modules if re.search(r"[\\/]" + re.escape(module) + r"\.(exe|dll)$", m["name"], re.I)), None)
    exe = next((os.path.join(root, "bin", f) for f in os.listdir(os.path.join(root, "bin"))
                if f.lower() == module.lower() + ".exe"), None)
    pdb = exe[:-4] + ".pdb" if exe else None
    if exe and os.path.exists(pdb):
        # no COFF symbol table: the PDB's procedures and publics (section:offset)
        d = open(exe, "rb").read()
        pe = struct.unpack_from("<I", d, 0x3C)[0]
        nsect, opt_size = struct.unpack_from("<H", d, pe + 6)[0], struct.unpack_from("<H", d, pe + 20)[0]
        (image_base,) = struct.unpack_from("<Q", d, pe + 24 + 24)
        vas = [struct.unpack_from("<I", d, pe + 24 + opt_size + 40 * i + 12)[0] for i in range(nsect)]
        out = subprocess.run(["llvm-pdbutil-19", "dump", "-publics", "-symbols", pdb],
                             capture_output=True, text=True).stdout
        name = None
        for l in out.splitlines():
            m = re.search(r"S_(?:PUB32|[GL]PROC32) \[size = \d+\] `(.*)`", l)
            if m:
                name = m.group(1)
                continue
            m = re.search(r"addr = (\d+):(\d+)", l)
            if m and name and 0 < int(m.group(1)) <= nsect:
                res.append((image_base + vas[int(m.group(1)) - 1] + int(m.group(2)), name))
            name = None
        res = sorted(set(res))
    elif exe:
        out = subprocess.run(["x86_64-w64-mingw32-nm", exe], capture_output=True, text=True).stdout
        for l in out.splitlines():
            q = l.split(None, 2)
            if len(q) == 3 and q[1] in "tT":
                n = q[2]
                if n.startswith(".text$"):
                    n = n[6:]
                elif n.startswith("."):
                    continue
                res.append((int(q[0], 16), n))
        names = subprocess.run(["x86_64-w64-mingw32-c++filt"], input="\n".join(n for _, n in res),
                               capture_output=True, text=True).stdout.splitlines()
        if len(names) == len(res):
            res = [(a, n) for (a, _), n in zip(res, names)]
    elif rec:
        dll = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/%s.dll" % module
        if os.path.exists(dll):
            res = [(int(rec["base"], 16) + rva, n) for rva, n in pe_exports(dll)]
    res.sort()
    SYMS[module] = res
    return res

def nearest(module, pc, modules):
    best = None
    for a, n in symbols(module, modules):
        if a <= pc:
            best = (a, n)
    return "%s+%#x" % (best[1], pc - best[0]) if best else None

packages = {}
for pkg in ("wine64", "wine", "libwine", "gcc-mingw-w64-x86-64-win32", "g++-mingw-w64-x86-64-win32",
            "mingw-w64-x86-64-dev", "binutils-mingw-w64-x86-64"):
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
    packages[pkg] = r.stdout.strip() if r.returncode == 0 else None
clang_dumps = [l for l in open(os.path.join(root, "dumps.txt")) if l.split("|")[2].startswith("clang-")]
for pkg in ("clang-19", "lld-19") if clang_dumps else ():
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True, text=True)
    packages[pkg] = r.stdout.strip() if r.returncode == 0 else None
packages["wine --version"] = subprocess.run(["wine", "--version"], capture_output=True, text=True).stdout.strip()
packages["x86_64-w64-mingw32-gcc --version"] = subprocess.run(
    ["x86_64-w64-mingw32-gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
if partial and old.get("packages") and any(old["packages"][k] != packages.get(k) for k in old["packages"]):
    sys.exit("make-dumps: the packages differ from those the other dumps were made with: "
             "%s != %s; regenerate everything" % (packages, old["packages"]))

dumps = []
selected = {l.split("|")[0] for l in open(os.path.join(root, "dumps-selected.txt"))}
for line in open(os.path.join(root, "dumps.txt")):
    name, src, cc, flags, nready, capture, shows = line.rstrip("\n").split("|", 6)
    rundir = os.path.join(root, "run", name)
    # (a partial run keeps the other dumps' entries as they are, even when an older run left
    # their files in $ROOT/run)
    if name not in selected or not os.path.exists(os.path.join("oracle", name + ".winedbg.json")) or \
            not os.path.exists(os.path.join(rundir, "meta.json")):
        if name in old_entries:
            dumps.append(old_entries[name])
        continue
    md = minidump(os.path.join(rundir, name + ".dmp"))
    oracle = json.load(open(os.path.join("oracle", name + ".winedbg.json")))
    meta = json.load(open(os.path.join(rundir, "meta.json")))
    wpid = int(open(os.path.join(rundir, "wpid")).read(), 16)
    oracle_tids = [t["tid"] for t in oracle["threads"]]
    extra = [t for t in md["thread_ids"] if t not in oracle_tids]
    threads = []
    for t in oracle["threads"]:
        phys = t["frames"]
        def show(f):
            if f["function"] is None:
                # winedbg has no name here: give the nearest symbol (the program's COFF
                # symbol table, a DLL's exports), marked with [], for the reader only
                near = nearest(f["module"], int(f["pc"], 16), md["modules"])
                s = "%s!%s" % (f["module"], f["pc"]) + (" [%s]" % near if near else "")
            else:
                s = "%s!%s" % (f["module"], f["function"])
            if f["inlined"]:
                s += " (inlined)"
            return s
        threads.append({"tid": t["tid"], "role": meta["roles"].get(str(t["tid"])),
                        "in_dump": t["tid"] in md["thread_ids"],
                        "winedbg_frames": len([f for f in phys if not f["inlined"]]),
                        "winedbg": " <- ".join(show(f) for f in phys),
                        **({"winedbg_source": "winedbg on the dump (exception context)"} if t.get("from_dump") else {})})
    crash = None
    if "exception" in md:
        crash = dict(md["exception"])
        if capture == "crash":
            crash["name"] = "EXCEPTION_ACCESS_VIOLATION" if crash["code"] == "0xc0000005" else None
    entry = {
        "name": name,
        "dump": f"dumps/{name}.dmp",
        "executable": f"bin/{name}.exe",
        "recorded_executable": next((m["name"] for m in md["modules"] if m["name"].lower().endswith(name + ".exe")), None),
        "source": f"programs/{src}",
        "build": (f"{cc} {common} {flags}" if not cc.startswith("clang-") else
                  f"{cc} {clang_cflags} {flags} -c -o {name}.o {src} && "
                  f"{cc} {clang_ldflags} -o {name}.exe {name}.o".replace("NAME", name)
                  .replace(os.path.join(root, "bin") + "/", "")).replace("  ", " "),
        "capture": ("winedbg --minidump (attaches: the dump also has winedbg's DbgUiRemoteBreakin "
                    "thread, and an Exception stream with EXCEPTION_BREAKPOINT in that thread)")
                   if capture == "live" else
                   "MiniDumpWriteDump(MiniDumpNormal, with MINIDUMP_EXCEPTION_INFORMATION) called by the "
                   "program's own SetUnhandledExceptionFilter filter (Wine's dbghelp)",
        "crash": crash if capture == "crash" else None,
        "exception_stream": md.get("exception"),
        "pid": wpid,
        "threads": len(md["thread_ids"]),
        "thread_ids": md["thread_ids"],
        "threads_without_oracle": extra,
        "shows": shows,
        "oracle": f"oracle/{name}.winedbg.json",
        "oracle_text": f"oracle/{name}.winedbg.txt",
        **({"oracle_dump_text": f"oracle/{name}.winedbg-dump.txt"} if capture == "crash" else {}),
        "streams": ["0x%x" % s for s in md["streams"]],
        "modules": md["modules"],
        "oracle_threads": threads,
    }
    if cc.startswith("clang-"):
        cv = pe_codeview(os.path.join(root, "bin", name + ".exe"))
        rec = entry["recorded_executable"]
        in_dump = md.get("codeview", {}).get(rec) if rec else None
        entry["pdb"] = {
            "name": f"{name}.pdb",
            "guid": cv["guid"],
            "age": cv["age"],
            "symbol_store_id": cv["symbol_store_id"],
            "recorded_path": cv["path"],
            "flat": f"symbols-flat/{name}.pdb",
            "symbol_store": f"symbols/{name}.pdb/{cv['symbol_store_id']}/{name}.pdb",
            "codeview_record_in_dump": in_dump is not None,
            **({"codeview_record_in_dump_matches": in_dump == cv} if in_dump else {}),
            "comment": "The executable's CodeView debug directory entry (RSDS) names the PDB "
                       "(recorded_path, as Wine sees it next to the executable) with this GUID "
                       "and age, the same as the PDB's info stream (make-dumps.sh checks with "
                       "llvm-pdbutil-19). codeview_record_in_dump: whether the dump's module "
                       "list carries that record (Wine 8's writer leaves it out: then the "
                       "executable's own debug directory gives it).",
        }
    dumps.append(entry)
manifest = {
    "comment": "Made by make-dumps.sh. Paths are relative to the directory unpack.py writes for "
               "this folder (python3 test/dumps/unpack.py test/dumps OUT puts them under "
               "OUT/windows/); the committed files are these paths + .xz. system32/ holds the Wine "
               "builtin DLLs that a captured thread's stack passes through (Debian's wine64, "
               "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/); the dumps record them as "
               "C:\\windows\\system32\\NAME.dll. Thread ids are decimal.",
    "machine": subprocess.run(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"],
                              capture_output=True, text=True).stdout.strip(),
    "packages": packages,
    "system32": sorted("system32/" + f[:-3] for f in os.listdir("system32") if f.endswith(".xz")),
    "dumps": dumps,
}
with open("dumps.json", "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
PY
du -sh "$HERE" | sed 's/^/make-dumps: total /'
