#include "stackwalk/core/Target.h"

#include <algorithm>

namespace stackwalk {

void Target::sortModules() {
  std::sort(modules.begin(), modules.end(), [](const Module &a, const Module &b) { return a.base < b.base; });
  std::sort(regions.begin(), regions.end(),
            [](const MemoryRegion &a, const MemoryRegion &b) { return a.start < b.start; });
}

const Module *Target::moduleAt(uint64_t address) const {
  auto it = std::upper_bound(modules.begin(), modules.end(), address,
                             [](uint64_t a, const Module &m) { return a < m.base; });
  if (it == modules.begin()) return nullptr;
  --it;
  return it->contains(address) ? &*it : nullptr;
}

const MemoryRegion *Target::regionAt(uint64_t address) const {
  auto it = std::upper_bound(regions.begin(), regions.end(), address,
                             [](uint64_t a, const MemoryRegion &r) { return a < r.start; });
  if (it == regions.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

bool Target::read(uint64_t address, std::span<uint8_t> out) const {
  if (dump_->read(address, out)) return true;
  const Module *module = moduleAt(address);
  if (!module || !module->image) return false;
  return module->image->readAtFileAddress(address - module->loadBias(), out);
}

bool Target::mayBeExecutable(uint64_t address) const {
  if (regionAt(address)) return isExecutable(address);
  const Module *module = moduleAt(address);
  return module && (!module->image || isExecutable(address));
}

bool Target::isExecutable(uint64_t address) const {
  if (const MemoryRegion *region = regionAt(address)) return region->executable;
  const Module *module = moduleAt(address);
  if (!module || !module->image) return false;
  uint64_t fileAddress = address - module->loadBias();
  for (const LoadSegment &seg : module->image->segments())
    if (fileAddress >= seg.vaddr && fileAddress - seg.vaddr < seg.memSize) return seg.executable;
  return false;
}

} // namespace stackwalk
