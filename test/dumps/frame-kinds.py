# frame-kinds.py: a companion to /work/shared/oracle/gdb-frames.py. It walks the same
# frames in the same order and records gdb's frame type for each, so that tests can tell
# which oracle frames are not physical frames on the stack:
#   "inline"   an inlined call (gdb-frames.py marks these "inlined": true)
#   "tailcall" a frame gdb *synthesized* from DWARF call-site information
#              (DW_TAG_call_site / DW_AT_call_tail_call) for a function that tail-called
#              the next one; no return address for it exists on the stack. gdb-frames.py
#              does not mark these, so they appear as ordinary frames in oracle/*.gdb.json.
#   "sigtramp" the signal trampoline (__restore_rt; `bt` shows "<signal handler called>")
#   "normal", "dummy", "arch", "sentinel" as in gdb's Python API.
# Run exactly like gdb-frames.py, with py ORACLE_OUT='oracle/NAME.gdb-kinds.json'.
import gdb, json

KINDS = {
    gdb.NORMAL_FRAME: "normal", gdb.DUMMY_FRAME: "dummy", gdb.INLINE_FRAME: "inline",
    gdb.TAILCALL_FRAME: "tailcall", gdb.SIGTRAMP_FRAME: "sigtramp", gdb.ARCH_FRAME: "arch",
    gdb.SENTINEL_FRAME: "sentinel",
}
result = {"threads": []}
for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.ptid[1]):
    thread.switch()
    frames = []
    frame = gdb.newest_frame()
    while frame is not None and len(frames) < 4096:
        frames.append({"pc": "0x%016x" % frame.pc(), "function": frame.name(),
                       "kind": KINDS.get(frame.type(), str(frame.type()))})
        try:
            frame = frame.older()
        except gdb.error:
            break
    result["threads"].append({"tid": thread.ptid[1], "frames": frames})
with open(globals().get("ORACLE_OUT", "/dev/stdout"), "w") as f:
    json.dump(result, f, indent=1)
    f.write("\n")
