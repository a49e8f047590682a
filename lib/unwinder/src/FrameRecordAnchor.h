// The CFA of a frame whose stack pointer is only a lower bound
// (Frame::spIsLowerBound: it was found through its callee's frame record,
// which on arm64 may lie anywhere in the callee's frame). Its frame pointer is
// exact: the callee's record held it, and it is the address of this frame's
// own record. Where the frame's unwind rules save the frame pointer and the
// link register as a record (fp at CFA+k, the return address just above it:
// AAPCS64's `stp x29, x30`), the CFA is fp - k whatever the stack pointer; a
// CFA from the stack pointer would be short by as much as the record lies
// below the frame's top, and its saved return address a stale word. Shared by
// the DWARF CFI and Breakpad STACK CFI unwinders, whose rules say the same.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <cstdint>
#include <optional>

namespace stackwalk {

struct FrameRecordRules {
  bool cfaFromStackPointer = false;          // the rules find the CFA from sp
  std::optional<int64_t> framePointerSavedAt; // fp saved at CFA + this
  std::optional<int64_t> returnAddressSavedAt; // the return address saved at CFA + this
};

// Whether the frame's CFA may come from its own record: asked before its
// rules are read, which most frames (an exact stack pointer) never need.
inline bool mayAnchorOnFrameRecord(const Frame &frame) {
  // AAPCS64 has x29 point at its record; 32-bit ARM code need not (GCC's ARM
  // mode points r11 at the saved lr: push {r11, lr}; add r11, sp, #4).
  return frame.spIsLowerBound && frame.regs.arch() == Arch::Arm64;
}

// The CFA from the frame's own record; nullopt where mayAnchorOnFrameRecord
// is false, the rules say no such record, or the frame pointer lies below the
// bound (it is not this frame's record: this frame lies above its callee's).
std::optional<uint64_t> cfaFromFrameRecord(const Frame &frame, const FrameRecordRules &rules, unsigned pointerSize);

} // namespace stackwalk
