#include "stackwalk/walk/ScanCandidates.h"

#include "NativeFrames.h"

#include "stackwalk/unwinder/FallbackUnwinders.h"

namespace stackwalk {

std::vector<ScanCandidate> scanCandidates(const Target &target, uint64_t from, unsigned words, Symbolizer &symbolizer) {
  std::vector<ScanCandidate> out;
  unsigned size = pointerSize(target.arch());
  for (unsigned i = 0; i < words; ++i) {
    uint64_t slot = from + uint64_t(i) * size;
    auto value = target.readPointer(slot, size);
    if (!value) break;
    if (!StackScanUnwinder::isPlausibleReturnAddress(target, *value)) continue;
    ScanCandidate candidate{slot, *value, {}};
    candidate.where.ip = *value;
    candidate.where.module = target.moduleAt(*value - 1);
    if (candidate.where.module) {
      const std::vector<SourceFrame> &sources = symbolizer.symbolize(*candidate.where.module, *value - 1);
      if (!sources.empty()) {
        const SourceFrame &physical = sources.back();
        candidate.where.function = physical.function;
        candidate.where.file = physical.file;
        candidate.where.line = physical.line;
        candidate.where.functionOffset = offsetInFunction(physical, *candidate.where.module, *value);
      }
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

} // namespace stackwalk
