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
// arm64 only: 32-bit ARM's r11 may point elsewhere in its record.
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

// The CFA from the frame's own record; nullopt where the frame's stack pointer
// is exact, the rules say no such record, or the frame pointer lies below the
// bound (it is not this frame's record: this frame lies above its callee's).
std::optional<uint64_t> cfaFromFrameRecord(const Frame &frame, const FrameRecordRules &rules, unsigned pointerSize);

} // namespace stackwalk
