#include "ScanPrinter.h"

#include "Format.h"

#include <nlohmann/json.hpp>

namespace stackwalk {

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
