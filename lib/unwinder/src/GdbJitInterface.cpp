#include "stackwalk/unwinder/GdbJitInterface.h"

#include "stackwalk/core/Hex.h"

#include <set>

namespace stackwalk {
namespace {

constexpr size_t MaxEntries = 4096;
constexpr uint64_t MaxObjectBytes = 64ull << 20;

// struct jit_descriptor { uint32_t version; uint32_t action_flag;
//                         jit_code_entry *relevant_entry, *first_entry; }
// struct jit_code_entry { jit_code_entry *next_entry, *prev_entry;
//                         const char *symfile_addr; uint64_t symfile_size; }
std::optional<uint64_t> descriptorAddress(const Target &target) {
  for (const Module &module : target.modules)
    if (module.image)
      if (auto address = module.image->symbolAddress("__jit_debug_descriptor"))
        return *address + module.loadBias();
  return std::nullopt;
}

} // namespace

void addGdbJitModules(Target &target, std::vector<std::string> &warnings) {
  auto descriptor = descriptorAddress(target);
  if (!descriptor) return;
  unsigned size = pointerSize(target.arch());
  auto version = target.readValue<uint32_t>(*descriptor);
  auto entry = target.readPointer(*descriptor + 8 + size, size);
  if (!version || !entry) {
    warnings.push_back("the GDB JIT descriptor at " + hex(*descriptor) + " is not in the dump");
    return;
  }
  std::set<uint64_t> visited;
  size_t added = 0;
  for (; *entry; entry = target.readPointer(*entry, size)) {
    if (!visited.insert(*entry).second || visited.size() > MaxEntries) {
      warnings.push_back("the GDB JIT entry list loops or is too long; the rest is ignored");
      break;
    }
    auto symfile = target.readPointer(*entry + 2 * size, size);
    auto symfileSize = target.readValue<uint64_t>(*entry + 3 * size);
    if (!symfile || !symfileSize || *symfileSize > MaxObjectBytes) {
      warnings.push_back("GDB JIT entry at " + hex(*entry) + ": its object is unreadable or too large");
      continue;
    }
    std::string name = "jit@" + hex(*symfile);
    auto image = ModuleImage::fromMemory(target, *symfile, *symfileSize, name);
    if (!image || (*image)->segments().empty()) {
      if (!image) llvm::consumeError(image.takeError());
      warnings.push_back("GDB JIT entry at " + hex(*entry) + ": no object file at " + hex(*symfile));
      continue;
    }
    Module module;
    module.name = name;
    module.recordedPath = "[jit]";
    module.dynamic = true;
    module.base = (*image)->preferredBase();
    uint64_t end = module.base;
    for (const LoadSegment &segment : (*image)->segments()) end = std::max(end, segment.vaddr + segment.memSize);
    module.size = end - module.base;
    module.image = std::shared_ptr<ModuleImage>(std::move(*image));
    module.imageNote = "registered through the GDB JIT interface";
    target.modules.push_back(std::move(module));
    ++added;
  }
  if (added) target.sortModules();
}

} // namespace stackwalk
