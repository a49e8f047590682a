#include "FrameRecordAnchor.h"

namespace stackwalk {

std::optional<uint64_t> cfaFromFrameRecord(const Frame &frame, const FrameRecordRules &rules, unsigned pointerSize) {
  if (!mayAnchorOnFrameRecord(frame) || !rules.cfaFromStackPointer || !rules.framePointerSavedAt ||
      rules.returnAddressSavedAt != *rules.framePointerSavedAt + int64_t(pointerSize))
    return std::nullopt;
  std::optional<uint64_t> fp = frame.regs.fp();
  if (!fp || *fp < frame.sp) return std::nullopt;
  return *fp - uint64_t(*rules.framePointerSavedAt);
}

} // namespace stackwalk
