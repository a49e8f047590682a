#include "RuntimeInfo.h"
#include "Format.h"

#include <nlohmann/json.hpp>

namespace stackwalk {
namespace {

using Json = nlohmann::ordered_json;

Json runtimeJson(const RuntimeDetails &details) {
  const RuntimeSummary &summary = details.summary;
  Json contracts = Json::object();
  for (const auto &[name, version] : summary.contracts) contracts[name] = version;
  Json threads = Json::array();
  for (const RuntimeDetails::Thread &thread : details.threads)
    threads.push_back({{"os_id", thread.osId},
                       {"managed_id", thread.managedId},
                       {"thread", addressString(thread.address)},
                       {"frame", addressString(thread.firstFrame)}});
  return {{"kind", summary.kind},
          {"version", summary.version},
          {"module", summary.module},
          {"descriptor", addressString(summary.descriptorAddress)},
          {"descriptor_source", summary.descriptorSource},
          {"descriptor_version", details.descriptorVersion},
          {"baseline", details.baseline},
          {"pointer_size", details.pointerSize},
          {"sub_descriptors", details.subDescriptors},
          {"types", details.types},
          {"contracts", std::move(contracts)},
          {"threads", std::move(threads)},
          {"threads_problem", details.threadsProblem.empty() ? Json(nullptr) : Json(details.threadsProblem)}};
}

void printText(std::ostream &out, const std::string &dumpPath, const RuntimeDetails &details) {
  out << "dump:    " << printable(dumpPath) << "\n";
  const RuntimeSummary &summary = details.summary;
  out << "runtime: " << summary.displayName << " " << printable(summary.version) << " (" << summary.kind << ")\n"
      << "descriptor: " << printable(summary.module) << " at " << addressString(summary.descriptorAddress)
      << ", read from the " << summary.descriptorSource << "; " << details.types << " types, pointer size "
      << details.pointerSize << "\n"
      << "contracts:";
  for (const auto &[name, version] : summary.contracts) out << " " << name << "=" << version;
  out << "\nmanaged threads: " << details.threads.size() << "\n";
  for (const RuntimeDetails::Thread &thread : details.threads)
    out << "  os " << thread.osId << "  managed " << thread.managedId << "  Thread " << addressString(thread.address)
        << "  Frame " << addressString(thread.firstFrame) << "\n";
  if (!details.threadsProblem.empty()) out << "  problem: " << printable(details.threadsProblem) << "\n";
}

} // namespace

void printRuntimeInfo(std::ostream &out, const std::string &dumpPath, llvm::Expected<RuntimeDetails> runtime,
                      JsonForm json) {
  if (json == JsonForm::None) {
    if (runtime) return printText(out, dumpPath, *runtime);
    out << "dump:    " << printable(dumpPath) << "\n"
        << "runtime: none readable (" << printable(llvm::toString(runtime.takeError())) << ")\n";
    return;
  }
  Json info{{"schema", "stackwalk/1"}, {"dump", Json{{"path", dumpPath}}}};
  if (runtime) {
    info["runtime"] = runtimeJson(*runtime);
  } else {
    info["runtime"] = nullptr;
    info["reason"] = llvm::toString(runtime.takeError());
  }
  out << info.dump(jsonIndent(json), ' ', false, Json::error_handler_t::replace) << "\n";
}

} // namespace stackwalk
