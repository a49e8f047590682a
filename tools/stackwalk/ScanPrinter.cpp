#include "ScanPrinter.h"

#include "Format.h"

#include <nlohmann/json.hpp>

namespace stackwalk {
namespace {

using Json = nlohmann::ordered_json;

// module!function+offset [file:line], or module+offset; empty outside every module.
std::string whereText(const ReportFrame &where) {
  if (!where.module) return "";
  std::string out = printable(where.module->name);
  if (where.function.empty()) return out + "+" + offsetString(where.ip - where.module->base);
  // append, not `"!" + std::string`: GCC 12 at -O3 warns of a 2^63-byte memcpy there (-Wrestrict, a false positive).
  out.append("!").append(printable(where.function));
  if (where.functionOffset && *where.functionOffset) out.append("+").append(offsetString(*where.functionOffset));
  if (!where.file.empty()) out += " [" + printable(where.file) + ":" + std::to_string(where.line.value_or(0)) + "]";
  return out;
}

void printText(std::ostream &out, const std::string &dumpPath, uint64_t from, unsigned wordSize,
               const std::vector<StackWord> &words, bool everyWord) {
  out << (everyWord ? "words" : "return-address candidates") << " on the stack from " << addressString(from)
      << " (" << printable(dumpPath) << ")" << (everyWord ? "; * marks a return-address candidate" : "") << ":\n";
  for (const StackWord &word : words) {
    std::string where = whereText(word.where);
    out << "  " << addressString(word.slot) << "  " << addressString(word.value);
    if (everyWord) out << (word.returnAddressCandidate ? " *" : (where.empty() ? "" : "  "));
    if (!where.empty()) out << (everyWord ? " " : "  ") << where;
    out << "\n";
  }
  out << "start a walk at one: --start-sp <slot + " << wordSize << "> --start-ip <value>\n";
}

Json wordJson(const StackWord &word) {
  const ReportFrame &where = word.where;
  return Json{{"address", addressString(word.slot)},
              {"value", addressString(word.value)},
              {"module", where.module ? Json(where.module->name) : Json(nullptr)},
              {"function", where.function.empty() ? Json(nullptr) : Json(where.function)},
              {"function_offset", where.functionOffset ? Json(offsetString(*where.functionOffset)) : Json(nullptr)},
              {"file", where.file.empty() ? Json(nullptr) : Json(where.file)},
              {"line", where.line ? Json(*where.line) : Json(nullptr)}};
}

} // namespace

void printStackWords(std::ostream &out, const std::string &dumpPath, uint64_t from, unsigned wordSize,
                     const std::vector<StackWord> &words, bool everyWord, JsonForm json) {
  if (json == JsonForm::None) return printText(out, dumpPath, from, wordSize, words, everyWord);
  Json candidates = Json::array(), all = Json::array();
  for (const StackWord &word : words) {
    if (word.returnAddressCandidate) candidates.push_back(wordJson(word));
    if (!everyWord) continue;
    Json entry = wordJson(word);
    entry["return_address_candidate"] = word.returnAddressCandidate;
    all.push_back(std::move(entry));
  }
  Json scan{{"from", addressString(from)}, {"candidates", std::move(candidates)}};
  if (everyWord) scan["words"] = std::move(all);
  Json document{{"schema", "stackwalk/1"}, {"dump", Json{{"path", dumpPath}}}, {"scan", std::move(scan)}};
  out << document.dump(jsonIndent(json), ' ', false, Json::error_handler_t::replace) << "\n";
}

} // namespace stackwalk
