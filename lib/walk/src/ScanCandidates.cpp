#include "ScanCandidates.h"

#include "Format.h"

#include "stackwalk/unwinder/FallbackUnwinders.h"

#include <nlohmann/json.hpp>

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
        if (physical.functionStart) candidate.where.functionOffset = *value - (*physical.functionStart + candidate.where.module->loadBias());
      }
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

void printScanCandidates(std::ostream &out, const std::string &dumpPath, uint64_t from,
                         const std::vector<ScanCandidate> &candidates, bool json) {
  if (!json) {
    out << "return-address candidates on the stack from " << addressString(from) << " (" << printable(dumpPath)
        << "):\n";
    for (const ScanCandidate &c : candidates) {
      out << "  " << addressString(c.slot) << "  " << addressString(c.value) << "  ";
      if (c.where.module) out << printable(c.where.module->name);
      if (!c.where.function.empty()) out << "!" << printable(c.where.function);
      if (c.where.functionOffset) out << "+" << offsetString(*c.where.functionOffset);
      if (!c.where.file.empty()) out << " [" << printable(c.where.file) << ":" << c.where.line.value_or(0) << "]";
      out << "\n";
    }
    out << "start a walk at one: --start-sp <slot + 8> --start-ip <value>\n";
    return;
  }
  using Json = nlohmann::ordered_json;
  Json list = Json::array();
  for (const ScanCandidate &c : candidates)
    list.push_back(Json{{"address", addressString(c.slot)},
                        {"value", addressString(c.value)},
                        {"module", c.where.module ? Json(c.where.module->name) : Json(nullptr)},
                        {"function", c.where.function.empty() ? Json(nullptr) : Json(c.where.function)},
                        {"function_offset", c.where.functionOffset ? Json(offsetString(*c.where.functionOffset)) : Json(nullptr)},
                        {"file", c.where.file.empty() ? Json(nullptr) : Json(c.where.file)},
                        {"line", c.where.line ? Json(*c.where.line) : Json(nullptr)}});
  Json document{{"schema", "stackwalk/1"}, {"dump", Json{{"path", dumpPath}}},
                {"scan", Json{{"from", addressString(from)}, {"candidates", std::move(list)}}}};
  out << document.dump(1, ' ', false, Json::error_handler_t::replace) << "\n";
}

} // namespace stackwalk
