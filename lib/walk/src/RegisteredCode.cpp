#include "stackwalk/walk/RegisteredCode.h"

#include "stackwalk/unwinder/GdbJitInterface.h"

namespace stackwalk {
namespace {

// The perf map given, never one chosen by the dump's pid: /tmp/perf-PID.map
// on this machine belongs to whatever process has that pid here (a FIFO there
// would block; a host process's map would name a foreign dump's frames).
std::optional<PerfMap> loadPerfMap(const std::string &path, std::vector<std::string> &warnings) {
  if (path.empty()) return std::nullopt;
  std::optional<PerfMap> map = PerfMap::load(path);
  if (!map) warnings.push_back("perf map " + path + " cannot be read");
  else if (size_t bad = map->malformedLines())
    warnings.push_back("perf map " + path + ": " + std::to_string(bad) + " malformed line(s) skipped");
  return map;
}

} // namespace

RegisteredCode RegisteredCode::find(Target &target, const std::string &perfMapPath, ImageCache &images,
                                    std::vector<std::string> &warnings) {
  RegisteredCode code;
  addGdbJitModules(target, warnings);
  for (Module &module : target.modules)
    if (module.dynamic) module.image = images.intern(std::move(module.image));
  code.perfMap_ = loadPerfMap(perfMapPath, warnings);
  code.dynamic_ = std::make_unique<LibunwindDynamicUnwinder>(readLibunwindDynamicInfo(target, warnings));
  return code;
}

std::optional<RegisteredCode::Name> RegisteredCode::nameAt(uint64_t address) const {
  if (const DynamicProcedure *procedure = dynamic_->procedureAt(address); procedure && !procedure->name.empty())
    return Name{procedure->name, procedure->start};
  if (const PerfMap::Entry *symbol = perfMap_ ? perfMap_->lookup(address) : nullptr)
    return Name{symbol->name, symbol->start};
  return std::nullopt;
}

} // namespace stackwalk
