#!/bin/sh
# oracle.sh OUT_DIR NAME OUT_JSON [EXECUTABLE]: gdb's backtraces of every thread of dump NAME, as JSON.
# OUT_DIR is where unpack.py unpacked test/dumps (it holds bin/, cores/, sysroot/).
# gdb's own chatter (and any warnings) goes to stdout/stderr; the JSON goes to OUT_JSON.
# Uses /work/shared/oracle/gdb-frames.py unless GDB_FRAMES names another copy; set
# GDB_FRAMES=test/dumps/frame-kinds.py to get each frame's gdb frame type instead.
# ORACLE_ARGS=1 adds -ex 'py ORACLE_ARGS=True': gdb-frames.py then records each frame's
# arguments too ("args": [{"name", "value"}]); unset or 0, the command is as before.
set -e
if [ $# -lt 3 ]; then
    echo "usage: oracle.sh OUT_DIR NAME OUT_JSON [EXECUTABLE relative to OUT_DIR, default bin/NAME]" >&2
    exit 2
fi
OUT=$1
NAME=$2
JSON=$3
FRAMES=${GDB_FRAMES:-/work/shared/oracle/gdb-frames.py}
EXE=${4:-bin/$NAME}
set --
if [ -n "${ORACLE_ARGS:-}" ] && [ "$ORACLE_ARGS" != 0 ]; then
    set -- -ex 'py ORACLE_ARGS=True'
fi
exec gdb -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' \
    -ex 'set backtrace past-main on' -ex 'set backtrace past-entry on' \
    -ex "set sysroot $OUT/sysroot" -ex "set debug-file-directory $OUT/sysroot/usr/lib/debug" \
    -ex "py ORACLE_OUT='$JSON'" "$@" \
    -x "$FRAMES" "$OUT/$EXE" "$OUT/cores/$NAME.core"
