#include "stackwalk/core/Target.h"

#include <algorithm>
#include <bit>

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

const MemoryRegion *regionContaining(std::span<const MemoryRegion> sorted, uint64_t address) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), address,
                             [](uint64_t a, const MemoryRegion &r) { return a < r.start; });
  if (it == sorted.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

const MemoryRegion *Target::regionAt(uint64_t address) const { return regionContaining(regions, address); }

std::optional<uint64_t> Target::stackEnd(uint64_t sp) const {
  const MemoryRegion *region = regionAt(sp);
  if (!region || !region->writable) return std::nullopt;
  // The kernel splits a stack's mapping where its pages differ (a huge page, a madvise).
  const MemoryRegion *last = &regions.back();
  while (region != last && region[1].start == region->end && region[1].writable) ++region;
  return region->end;
}

bool Target::read(uint64_t address, std::span<uint8_t> out) const {
  if (readWhole(address, out)) return true;
  // A large read may span pages the dump holds and pages only a module file
  // holds: read it page by page.
  constexpr uint64_t Page = 4096;
  if (out.size() <= Page) return false;
  for (size_t done = 0; done < out.size();) {
    size_t piece = std::min<uint64_t>(out.size() - done, Page - (address + done) % Page);
    if (!readWhole(address + done, out.subspan(done, piece))) return false;
    done += piece;
  }
  return true;
}

bool Target::readWhole(uint64_t address, std::span<uint8_t> out) const {
  if (dump_->read(address, out)) return true;
  const Module *module = moduleAt(address);
  if (!module || !module->image) return false;
  if (module->flatFileMapping) return module->image->readAtFileOffset(address - module->base, out);
  return module->image->readAtFileAddress(address - module->loadBias(), out);
}

namespace {
constexpr unsigned LargestAddressBits = 48, SmallestAddressBits = 39;
} // namespace

uint64_t Target::codeAddress(uint64_t returnAddress) const {
  if (arch_ == Arch::Arm) return returnAddress & ~uint64_t(1); // the Thumb bit
  if (arch_ != Arch::Arm64) return returnAddress;
  constexpr uint64_t UserAddressBits = (uint64_t(1) << LargestAddressBits) - 1;
  return pointerAuthMask ? returnAddress & ~*pointerAuthMask : returnAddress & UserAddressBits;
}

void Target::inferPointerAuthMask() {
  if (arch_ != Arch::Arm64 || pointerAuthMask) return;
  uint64_t highest = 0;
  for (const MemoryRegion &region : regions) highest = std::max(highest, region.end - 1);
  for (const Module &module : modules)
    if (module.size) highest = std::max(highest, module.base + module.size - 1);
  for (const ThreadInfo &thread : threads)
    for (std::optional<uint64_t> value : {thread.context.sp(), thread.context.pc()})
      if (value) highest = std::max(highest, *value);
  unsigned bits = std::clamp(unsigned(std::bit_width(highest)), SmallestAddressBits, LargestAddressBits);
  pointerAuthMask = ~((uint64_t(1) << bits) - 1);
}

bool Target::isExecutable(uint64_t address) const {
  if (const MemoryRegion *region = regionAt(address)) return region->executable;
  const Module *module = moduleAt(address);
  if (!module) return false;
  auto inExecutableSegment = [](const std::vector<LoadSegment> &segments, uint64_t at) {
    for (const LoadSegment &seg : segments)
      if (at >= seg.vaddr && at - seg.vaddr < seg.memSize) return seg.executable;
    return false;
  };
  if (module->image) return inExecutableSegment(module->image->segments(), address - module->loadBias());
  return module->segmentsInDump.empty() || inExecutableSegment(module->segmentsInDump, address - module->base);
}

bool Target::mayBeUnplacedCode(uint64_t address) const {
  constexpr uint64_t LowestMapped = 0x10000;
  // x86-64's and arm64's user address spaces end below bit 47 and bit 48 (Linux, Windows, macOS).
  uint64_t userEnd = arch_ == Arch::X86_64 ? uint64_t(1) << 47 : arch_ == Arch::Arm64 ? uint64_t(1) << 48 : uint64_t(1) << 32;
  if (!regions.empty() || moduleAt(address) || address < LowestMapped || address >= userEnd) return false;
  uint8_t held = 0;
  return !readFromDump(address, {&held, 1});
}

} // namespace stackwalk
