#include "DebugInfoBudget.h"

#include <algorithm>
#include <map>

namespace stackwalk {
namespace {

// The uncompressed DWARF the symbolizer would read for the module.
uint64_t debugBytes(const Module &module) {
  const ModuleImage *debug = module.image->debugImage();
  return (debug ? *debug : *module.image).debugInfoBytes();
}

} // namespace

void limitDebugInfo(Target &target, uint64_t maxBytes, std::vector<std::string> &warnings) {
  std::vector<Module *> order;
  for (Module &module : target.modules)
    if (module.image) order.push_back(&module);
  std::stable_partition(order.begin(), order.end(), [](const Module *m) { return !m->image->inMemory(); });

  uint64_t left = maxBytes, copiedLeft = MaxCopiedImageDebugBytes;
  std::map<const ModuleImage *, bool> decided; // an image several modules share is charged once
  std::string refused;
  size_t count = 0;
  for (Module *module : order) {
    auto [known, fresh] = decided.try_emplace(module->image.get(), false);
    if (!fresh) {
      module->debugInfoRefused = known->second;
      continue;
    }
    uint64_t bytes = debugBytes(*module);
    uint64_t &pool = module->image->inMemory() ? copiedLeft : left;
    if (bytes <= std::min(left, pool)) {
      left -= bytes;
      if (&pool != &left) pool -= bytes;
      continue;
    }
    module->debugInfoRefused = known->second = true;
    refused += " " + module->name;
    ++count;
  }
  if (count)
    warnings.push_back("debug info of " + std::to_string(count) + " module(s) not read, over the dump's budget of " +
                       std::to_string(maxBytes >> 20) + " MiB uncompressed (" +
                       std::to_string(MaxCopiedImageDebugBytes >> 20) +
                       " MiB for images copied from the dump; --max-debug-bytes): named by their symbol tables:" +
                       refused);
}

} // namespace stackwalk
