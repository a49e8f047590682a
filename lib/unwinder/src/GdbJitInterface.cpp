#include "stackwalk/unwinder/GdbJitInterface.h"

#include "stackwalk/core/Fail.h"
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

namespace {

// What was left out of the entry list, said once per kind rather than per entry:
// a crafted list has thousands.
struct SkippedEntries {
  size_t unreadable = 0, repeated = 0, overBudget = 0;
  std::optional<uint64_t> firstUnreadable;

  void report(std::vector<std::string> &warnings) const {
    if (unreadable)
      warnings.push_back("GDB JIT: " + std::to_string(unreadable) + " entr" + (unreadable == 1 ? "y" : "ies") +
                         " without a readable object file of at most 64 MiB (the first at " + hex(*firstUnreadable) +
                         ")");
    if (repeated)
      warnings.push_back("GDB JIT: " + std::to_string(repeated) + " entries name an object already read");
    if (overBudget)
      warnings.push_back("GDB JIT: " + std::to_string(overBudget) +
                         " object(s) left out: the dump's budget for images copied from its memory is spent");
  }
};

Module jitModule(std::unique_ptr<ModuleImage> image, const std::string &name) {
  Module module;
  module.name = name;
  module.recordedPath = "[jit]";
  module.dynamic = true;
  module.base = image->preferredBase();
  uint64_t end = module.base;
  for (const LoadSegment &segment : image->segments()) end = std::max(end, segment.vaddr + segment.memSize);
  module.size = end - module.base;
  module.image = std::shared_ptr<ModuleImage>(std::move(image));
  module.imageNote = "registered through the GDB JIT interface";
  return module;
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
  std::set<uint64_t> visited, objects;
  SkippedEntries skipped;
  size_t added = 0;
  for (; *entry; entry = target.readPointer(*entry, size)) {
    if (!visited.insert(*entry).second || visited.size() > MaxEntries) {
      warnings.push_back("the GDB JIT entry list loops or is too long; the rest is ignored");
      break;
    }
    auto symfile = target.readPointer(*entry + 2 * size, size);
    auto symfileSize = target.readValue<uint64_t>(*entry + 3 * size);
    if (symfile && !objects.insert(*symfile).second) {
      ++skipped.repeated;
      continue;
    }
    if (symfile && symfileSize && *symfileSize > target.budget.copiedImageBytesLeft()) {
      ++skipped.overBudget;
      continue;
    }
    std::string name = symfile ? "jit@" + hex(*symfile) : "";
    auto image = symfile && symfileSize && *symfileSize <= MaxObjectBytes
                     ? ModuleImage::fromMemory(target, *symfile, *symfileSize, name)
                     : llvm::Expected<std::unique_ptr<ModuleImage>>(fail("unreadable"));
    if (!image || (*image)->segments().empty()) {
      if (!image) llvm::consumeError(image.takeError());
      if (!skipped.unreadable++) skipped.firstUnreadable = *entry;
      continue;
    }
    target.budget.takeCopiedImage((*image)->memoryBytes().size());
    target.modules.push_back(jitModule(std::move(*image), name));
    ++added;
  }
  skipped.report(warnings);
  if (added) target.sortModules();
}

} // namespace stackwalk
