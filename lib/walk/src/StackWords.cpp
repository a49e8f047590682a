#include "stackwalk/walk/StackWords.h"

#include "NativeFrames.h"

#include "stackwalk/unwinder/FallbackUnwinders.h"

namespace stackwalk {
namespace {

// Names what `value` points into; `lookup` is the address inside the code
// to name (a return address's call is the byte before it).
void describeValue(ReportFrame &where, const Target &target, uint64_t value, uint64_t lookup, Symbolizer &symbolizer) {
  where.ip = value;
  where.module = target.moduleAt(lookup);
  if (!where.module) return;
  const std::vector<SourceFrame> &sources = symbolizer.symbolize(*where.module, lookup);
  if (sources.empty()) return;
  const SourceFrame &physical = sources.back();
  where.function = physical.function;
  where.file = physical.file;
  where.line = physical.line;
  where.functionOffset = offsetInFunction(physical, *where.module, value);
}

} // namespace

std::vector<StackWord> scanStack(const Target &target, uint64_t from, unsigned words, Symbolizer &symbolizer,
                                 bool everyWord) {
  std::vector<StackWord> out;
  unsigned size = pointerSize(target.arch());
  for (unsigned i = 0; i < words; ++i) {
    uint64_t slot = from + uint64_t(i) * size;
    auto value = target.readPointer(slot, size);
    if (!value) break;
    bool candidate = StackScanUnwinder::isPlausibleReturnAddress(target, *value);
    if (!candidate && !everyWord) continue;
    StackWord word{slot, *value, candidate, {}};
    describeValue(word.where, target, *value, candidate ? *value - 1 : *value, symbolizer);
    out.push_back(std::move(word));
  }
  return out;
}

} // namespace stackwalk
