#include "FrameRecordAnchor.h"

namespace stackwalk {

std::optional<uint64_t> cfaFromFrameRecord(const Frame &frame, const FrameRecordRules &rules, unsigned pointerSize) {
  // AAPCS64 has x29 point at its record; 32-bit ARM code need not (GCC's ARM
  // mode points r11 at the saved lr: push {r11, lr}; add r11, sp, #4).
  if (frame.regs.arch() != Arch::Arm64) return std::nullopt;
  if (!frame.spIsLowerBound || !rules.cfaFromStackPointer || !rules.framePointerSavedAt ||
      rules.returnAddressSavedAt != *rules.framePointerSavedAt + int64_t(pointerSize))
    return std::nullopt;
  std::optional<uint64_t> fp = frame.regs.fp();
  if (!fp || *fp < frame.sp) return std::nullopt;
  return *fp - uint64_t(*rules.framePointerSavedAt);
}

} // namespace stackwalk
