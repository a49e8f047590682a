#include "RuntimeInfo.h"
#include "Format.h"

#include "stackwalk/frames/DotnetRuntime.h"

#include <nlohmann/json.hpp>

namespace stackwalk {

void printRuntimeInfo(std::ostream &out, const std::string &dumpPath, const Target &target, bool json) {
  auto runtime = frames::DotnetRuntime::open(target);
  nlohmann::ordered_json info{{"dump", dumpPath}};
  if (!runtime) {
    info["runtime"] = nullptr;
    info["reason"] = llvm::toString(runtime.takeError());
  } else {
    const frames::ContractDescriptor &descriptor = (*runtime)->descriptor();
    const auto &origin = descriptor.origin();
    const frames::RuntimeThreadList &threads = (*runtime)->threads();
    nlohmann::ordered_json contracts = nlohmann::ordered_json::object();
    for (const auto &[name, version] : descriptor.contracts()) contracts[name] = version;
    nlohmann::ordered_json managedThreads = nlohmann::ordered_json::array();
    for (const frames::RuntimeThread &t : threads.threads)
      managedThreads.push_back({{"os_id", t.osId}, {"managed_id", t.managedId}, {"thread", addressString(t.address)},
                                {"frame", addressString(t.firstFrame)}});
    info["runtime"] = {{"kind", "coreclr"},
                       {"version", (*runtime)->version()},
                       {"module", origin.module},
                       {"descriptor", addressString(origin.address)},
                       {"descriptor_source", origin.source},
                       {"descriptor_version", descriptor.version()},
                       {"baseline", descriptor.baseline()},
                       {"pointer_size", descriptor.pointerSize()},
                       {"sub_descriptors", origin.subDescriptors},
                       {"types", descriptor.types().size()},
                       {"contracts", contracts},
                       {"threads", managedThreads},
                       {"threads_problem", threads.problem.empty() ? nlohmann::ordered_json(nullptr)
                                                                   : nlohmann::ordered_json(threads.problem)}};
  }
  if (json) {
    out << info.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    return;
  }
  out << "dump:    " << printable(dumpPath) << "\n";
  if (info["runtime"].is_null()) {
    out << "runtime: none readable (" << printable(info["reason"].get<std::string>()) << ")\n";
    return;
  }
  const auto &r = info["runtime"];
  out << "runtime: .NET " << printable(r["version"].get<std::string>()) << " (coreclr)\n"
      << "descriptor: " << printable(r["module"].get<std::string>()) << " at " << r["descriptor"].get<std::string>()
      << ", read from the " << r["descriptor_source"].get<std::string>() << "; " << r["types"].get<size_t>()
      << " types, pointer size " << r["pointer_size"].get<unsigned>() << "\n"
      << "contracts:";
  for (const auto &[name, version] : r["contracts"].items()) out << " " << name << "=" << version.get<unsigned>();
  out << "\nmanaged threads: " << r["threads"].size() << "\n";
  for (const auto &t : r["threads"])
    out << "  os " << t["os_id"].get<uint64_t>() << "  managed " << t["managed_id"].get<uint32_t>() << "  Thread "
        << t["thread"].get<std::string>() << "  Frame " << t["frame"].get<std::string>() << "\n";
  if (!r["threads_problem"].is_null()) out << "  problem: " << printable(r["threads_problem"].get<std::string>()) << "\n";
}

} // namespace stackwalk
