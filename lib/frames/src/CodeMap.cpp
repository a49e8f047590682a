#include "stackwalk/frames/CodeMap.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

namespace stackwalk::frames {
namespace {

// The range-section map: 5 levels of 256 pointers over bits 56..17 of an
// address on 64-bit targets (2 levels over bits 31..16 on 32-bit); interior
// pointers carry a collectible flag in bit 0.
struct MapShape {
  unsigned levels, maxSetBit;
};
MapShape mapShape(unsigned pointerSize) { return pointerSize == 4 ? MapShape{2, 31} : MapShape{5, 56}; }

unsigned levelIndex(uint64_t address, unsigned level, MapShape shape) {
  uint64_t used = address >> (shape.maxSetBit + 1 - shape.levels * 8);
  return unsigned((used >> ((level - 1) * 8)) & 0xFF);
}

constexpr uint64_t CollectibleFlag = 1;
constexpr uint64_t FlagCodeHeap = 0x02, FlagRangeList = 0x04, FlagInterpreter = 0x08;
constexpr unsigned MaxFragments = 4096, MaxHashProbes = 1 << 16, MaxFuncletSteps = 4096;

// Nibble map: one 32-bit unit per 32 bytes of code, 4-bit nibbles giving
// the offset (in 4-byte steps, 1-based) of a method start in each 32-byte
// bucket, most significant nibble first. Version 2 also stores, in units a
// method covers entirely, the method start itself (nibble values 9..12).
constexpr uint64_t BytesPerBucket = 32, NibblesPerUnit = 8;

uint64_t bucketStart(uint64_t mapBase, uint64_t nibbleIndex, uint32_t nibble) {
  return mapBase + nibbleIndex * BytesPerBucket + (nibble - 1) * 4;
}

} // namespace

CodeMap::CodeMap(const RuntimeData &data) : data_(data) {
  nibbleMapVersion_ = data.descriptor().contractVersion("ExecutionManager").value_or(1) >= 2 ? 2 : 1;
}

llvm::Expected<std::optional<CodeBlock>> CodeMap::find(uint64_t address) {
  if (auto it = cache_.find(address); it != cache_.end()) return it->second;
  auto range = rangeSection(address);
  if (!range) return range.takeError();
  auto block = *range ? inRange(**range, address) : std::optional<CodeBlock>();
  if (!block) return block.takeError();
  cache_[address] = *block;
  return *block;
}

llvm::Expected<std::optional<CodeBlock>> CodeMap::inRange(const RangeSection &range, uint64_t address) {
  if (range.flags & FlagInterpreter) return std::nullopt; // interpreted methods have no native frames
  if (range.r2rModule) return findReadyToRun(range, address);
  if (range.flags & FlagCodeHeap) return findJitted(range, address);
  if (!(range.flags & FlagRangeList)) return std::nullopt;
  // Stubs and precodes: runtime code without unwind info.
  CodeBlock stub;
  stub.kind = CodeBlock::Kind::Stub;
  stub.start = range.begin;
  return stub;
}

llvm::Expected<std::optional<CodeMap::RangeSection>> CodeMap::rangeSection(uint64_t address) {
  unsigned ps = data_.pointerSize();
  MapShape shape = mapShape(ps);
  auto mapAddress = data_.global("ExecutionManagerCodeRangeMapAddress");
  if (!mapAddress) return mapAddress.takeError();
  auto top = data_.offset("RangeSectionMap", "TopLevelData");
  if (!top) return top.takeError();
  uint64_t level = *mapAddress + *top;
  uint64_t slot = 0;
  for (unsigned l = shape.levels; l >= 1; --l) {
    slot = level + uint64_t(levelIndex(address, l, shape)) * ps;
    auto value = data_.readPointer(slot, "a range-section map slot");
    if (!value) return value.takeError();
    uint64_t next = *value & ~CollectibleFlag;
    if (next == 0) return std::nullopt;
    level = next;
  }
  // `level` is now the first fragment covering the 128 KiB chunk.
  uint64_t fragment = level;
  for (unsigned i = 0; fragment && i < MaxFragments; ++i) {
    auto begin = data_.pointer(fragment, "RangeSectionFragment", "RangeBegin");
    if (!begin) return begin.takeError();
    auto end = data_.pointer(fragment, "RangeSectionFragment", "RangeEndOpen");
    if (!end) return end.takeError();
    if (address >= *begin && address < *end) {
      auto sectionAddress = data_.pointer(fragment, "RangeSectionFragment", "RangeSection");
      if (!sectionAddress) return sectionAddress.takeError();
      RangeSection section{*sectionAddress, 0, 0, 0, 0, 0};
      for (auto [field, out] : {std::pair{"RangeBegin", &section.begin}, {"RangeEndOpen", &section.end},
                                {"HeapList", &section.heapList}, {"R2RModule", &section.r2rModule}}) {
        auto v = data_.pointer(section.address, "RangeSection", field);
        if (!v) return v.takeError();
        *out = *v;
      }
      auto flags = data_.value<uint32_t>(section.address, "RangeSection", "Flags");
      if (!flags) return flags.takeError();
      section.flags = *flags;
      if (data_.hasField("RangeSection", "NextForDelete")) {
        auto deleted = data_.pointer(section.address, "RangeSection", "NextForDelete");
        if (deleted && *deleted) return std::nullopt; // being unloaded
        if (!deleted) llvm::consumeError(deleted.takeError());
      }
      return section;
    }
    auto next = data_.pointer(fragment, "RangeSectionFragment", "Next");
    if (!next) return next.takeError();
    fragment = *next & ~CollectibleFlag;
  }
  return std::nullopt;
}

llvm::Expected<std::optional<uint64_t>> CodeMap::methodStart(uint64_t mapBase, uint64_t headerMap, uint64_t address) {
  uint64_t relative = address - mapBase;
  uint64_t index = relative / BytesPerBucket;
  uint32_t wanted = uint32_t((relative & (BytesPerBucket - 1)) / 4 + 1);
  auto unitAt = [&](uint64_t nibbleIndex) -> llvm::Expected<uint32_t> {
    uint64_t at = headerMap + (nibbleIndex / NibblesPerUnit) * 4;
    auto v = data_.target().readValue<uint32_t>(at);
    if (!v) return fail("the nibble map at " + hex(at) + " is not in the dump");
    return *v;
  };
  auto isPointer = [&](uint32_t unit) { return nibbleMapVersion_ >= 2 && (unit & 0xF) > 8; };
  auto decodePointer = [&](uint32_t unit) { return mapBase + (unit & ~0xFu) + (((unit & 0xF) - 9) << 2); };
  auto shiftFor = [](uint64_t nibbleIndex) { return 28 - unsigned(nibbleIndex % NibblesPerUnit) * 4; };

  auto unit = unitAt(index);
  if (!unit) return unit.takeError();
  if (isPointer(*unit)) return decodePointer(*unit);
  uint32_t t = *unit >> shiftFor(index);
  if ((t & 0xF) && (t & 0xF) <= wanted) return bucketStart(mapBase, index, t & 0xF);
  // Earlier nibbles of the same unit.
  t >>= 4;
  uint64_t i = index;
  while (t && i % NibblesPerUnit) {
    --i;
    if (t & 0xF) return bucketStart(mapBase, i, t & 0xF);
    t >>= 4;
  }
  // Earlier units: version 2 needs only the one before (a method covering a
  // whole unit stores its start there); version 1 scans back to the start
  // of the map, which the code heap bounds.
  uint64_t unitIndex = index / NibblesPerUnit;
  uint64_t maxUnits = nibbleMapVersion_ >= 2 ? 1 : unitIndex;
  for (uint64_t back = 1; back <= maxUnits && back <= unitIndex; ++back) {
    uint64_t last = (unitIndex - back) * NibblesPerUnit + NibblesPerUnit - 1;
    auto earlier = unitAt(last);
    if (!earlier) return earlier.takeError();
    if (*earlier == 0) continue;
    if (isPointer(*earlier)) return decodePointer(*earlier);
    uint32_t u = *earlier;
    for (uint64_t n = last;; --n, u >>= 4)
      if (u & 0xF) return bucketStart(mapBase, n, u & 0xF);
  }
  return std::nullopt;
}

llvm::Expected<RuntimeFunction> CodeMap::runtimeFunction(uint64_t table, uint32_t index) {
  auto size = data_.size("RuntimeFunction");
  if (!size) return size.takeError();
  uint64_t at = table + uint64_t(index) * *size;
  RuntimeFunction f;
  auto begin = data_.value<uint32_t>(at, "RuntimeFunction", "BeginAddress");
  if (!begin) return begin.takeError();
  auto unwind = data_.value<uint32_t>(at, "RuntimeFunction", "UnwindData");
  if (!unwind) return unwind.takeError();
  f.begin = *begin;
  f.unwindInfo = *unwind;
  if (data_.hasField("RuntimeFunction", "EndAddress")) {
    auto end = data_.value<uint32_t>(at, "RuntimeFunction", "EndAddress");
    if (!end) return end.takeError();
    f.end = *end;
  }
  return f;
}

// The last entry that begins at or before `rva` (the tables are sorted).
llvm::Expected<std::optional<uint32_t>> CodeMap::runtimeFunctionIndex(uint64_t table, uint32_t count, uint64_t rva) {
  if (count == 0) return std::nullopt;
  uint32_t low = 0, high = count; // answer in [low, high)
  while (high - low > 1) {
    uint32_t mid = low + (high - low) / 2;
    auto f = runtimeFunction(table, mid);
    if (!f) return f.takeError();
    if (rva < f->begin) high = mid;
    else low = mid;
  }
  auto f = runtimeFunction(table, low);
  if (!f) return f.takeError();
  if (rva < f->begin) return std::nullopt;
  return low;
}

// A code header's entries, searched as EEJitManager::LazyGetFunctionEntry
// does: the first that contains the address. They need not be sorted: a method
// may reserve more entries than the JIT fills (on Windows, an
// [UnmanagedCallersOnly] method's second entry was all zero). Without end
// addresses in the descriptor, the last entry beginning at or before it.
llvm::Expected<std::optional<uint32_t>> CodeMap::jittedFunctionIndex(uint64_t table, uint32_t count, uint64_t rva) {
  if (!data_.hasField("RuntimeFunction", "EndAddress")) return runtimeFunctionIndex(table, count, rva);
  for (uint32_t i = 0; i < count; ++i) {
    auto f = runtimeFunction(table, i);
    if (!f) return f.takeError();
    if (f->begin <= rva && rva < f->end) return i;
  }
  return std::nullopt;
}

llvm::Expected<std::optional<CodeBlock>> CodeMap::findJitted(const RangeSection &range, uint64_t address) {
  uint64_t node = range.heapList;
  auto start = data_.pointer(node, "CodeHeapListNode", "StartAddress");
  if (!start) return start.takeError();
  auto end = data_.pointer(node, "CodeHeapListNode", "EndAddress");
  if (!end) return end.takeError();
  if (address < *start || address >= *end) return std::nullopt;
  auto mapBase = data_.pointer(node, "CodeHeapListNode", "MapBase");
  if (!mapBase) return mapBase.takeError();
  auto headerMap = data_.pointer(node, "CodeHeapListNode", "HeaderMap");
  if (!headerMap) return headerMap.takeError();
  if (address < *mapBase) return std::nullopt;
  auto codeStart = methodStart(*mapBase, *headerMap, address);
  if (!codeStart) return codeStart.takeError();
  if (!*codeStart || **codeStart > address) return std::nullopt;

  CodeBlock block;
  block.start = **codeStart;
  block.unwindBase = range.begin;
  auto header = data_.readPointer(block.start - data_.pointerSize(), "a code header pointer");
  if (!header) return header.takeError();
  auto stubLast = data_.global("StubCodeBlockLast");
  if (stubLast && *header <= *stubLast) {
    block.kind = CodeBlock::Kind::Stub;
    block.stubKind = unsigned(*header);
    return block;
  }
  if (!stubLast) llvm::consumeError(stubLast.takeError());
  auto md = data_.pointer(*header, "RealCodeHeader", "MethodDesc");
  if (!md) return md.takeError();
  block.methodDesc = *md;
  auto count = data_.value<uint32_t>(*header, "RealCodeHeader", "NumUnwindInfos");
  if (!count) return count.takeError();
  auto infos = data_.offset("RealCodeHeader", "UnwindInfos");
  if (!infos) return infos.takeError();
  uint64_t table = *header + *infos;
  if (*count > 4096) return fail("a code header at " + hex(*header) + " claims " + llvm::Twine(*count) + " unwind infos");
  auto index = jittedFunctionIndex(table, *count, address - range.begin);
  if (!index) return index.takeError();
  if (*index) {
    auto f = runtimeFunction(table, **index);
    if (!f) return f.takeError();
    block.function = *f;
  }
  return block;
}

// PtrHashMap lookup (HashMap::LookupValue): open addressing over buckets of
// four keys and values; the first "bucket" holds the bucket count.
llvm::Expected<uint64_t> CodeMap::hashMapValue(uint64_t map, uint64_t key) {
  auto buckets = data_.pointer(map, "HashMap", "Buckets");
  if (!buckets) return buckets.takeError();
  auto bucketSize = data_.size("Bucket");
  if (!bucketSize) return bucketSize.takeError();
  auto keysAt = data_.offset("Bucket", "Keys");
  if (!keysAt) return keysAt.takeError();
  auto valuesAt = data_.offset("Bucket", "Values");
  if (!valuesAt) return valuesAt.takeError();
  auto slots = data_.global("HashMapSlotsPerBucket");
  if (!slots) return slots.takeError();
  auto mask = data_.global("HashMapValueMask");
  if (!mask) return mask.takeError();
  auto size = data_.target().readValue<uint32_t>(*buckets);
  if (!size) return fail("the hash map's bucket count at " + hex(*buckets) + " is not in the dump");
  if (*size < 2) return 0;
  key = key > 1 ? key : key + 100; // PtrHashMap::SanitizeKey
  uint32_t seed = uint32_t(key >> 2);
  uint32_t increment = 1 + (uint32_t(key >> 5) + 1) % (*size - 1);
  unsigned ps = data_.pointerSize();
  for (uint32_t probe = 0; probe < *size && probe < MaxHashProbes; ++probe) {
    uint64_t bucket = *buckets + *bucketSize + uint64_t(*bucketSize) * (seed % *size);
    for (uint64_t s = 0; s < *slots && s < 16; ++s) {
      auto k = data_.readPointer(bucket + *keysAt + s * ps, "a hash map key");
      if (!k) return k.takeError();
      if (*k != key) continue;
      auto v = data_.readPointer(bucket + *valuesAt + s * ps, "a hash map value");
      if (!v) return v.takeError();
      return (*v & *mask) << 1; // PtrHashMap stores values shifted right by one
    }
    auto first = data_.readPointer(bucket + *valuesAt, "a hash map value");
    if (!first) return first.takeError();
    if ((*first & ~*mask) == 0) break; // no collision: the key is not here
    seed += increment;
  }
  return 0;
}

llvm::Expected<std::optional<CodeBlock>> CodeMap::findReadyToRun(const RangeSection &range, uint64_t address) {
  auto info = data_.pointer(range.r2rModule, "Module", "ReadyToRunInfo");
  if (!info) return info.takeError();
  auto table = data_.pointer(*info, "ReadyToRunInfo", "RuntimeFunctions");
  if (!table) return table.takeError();
  auto count = data_.value<uint32_t>(*info, "ReadyToRunInfo", "NumRuntimeFunctions");
  if (!count) return count.takeError();
  uint64_t rva = address - range.begin;
  // Calls through not-yet-resolved methods go through thunks in the image.
  if (auto thunks = data_.pointer(*info, "ReadyToRunInfo", "DelayLoadMethodCallThunks"); thunks && *thunks) {
    auto va = data_.value<uint32_t>(*thunks, "ImageDataDirectory", "VirtualAddress");
    auto sz = data_.value<uint32_t>(*thunks, "ImageDataDirectory", "Size");
    if (va && sz && rva >= *va && rva < uint64_t(*va) + *sz) {
      CodeBlock stub;
      stub.kind = CodeBlock::Kind::Stub;
      stub.start = range.begin + *va;
      return stub;
    }
    if (!va) llvm::consumeError(va.takeError());
    if (!sz) llvm::consumeError(sz.takeError());
  } else if (!thunks) {
    llvm::consumeError(thunks.takeError());
  }
  auto index = runtimeFunctionIndex(*table, *count, rva);
  if (!index) return index.takeError();
  if (!*index) return std::nullopt;
  auto function = runtimeFunction(*table, **index);
  if (!function) return function.takeError();

  auto mapOffset = data_.offset("ReadyToRunInfo", "EntryPointToMethodDescMap");
  if (!mapOffset) return mapOffset.takeError();
  // Funclets have no entry of their own in the map: the method they belong
  // to is the nearest earlier entry that has one.
  CodeBlock block;
  block.kind = CodeBlock::Kind::ReadyToRun;
  block.unwindBase = range.begin;
  block.function = *function;
  uint32_t i = **index;
  for (unsigned steps = 0; steps < MaxFuncletSteps; ++steps) {
    auto f = runtimeFunction(*table, i);
    if (!f) return f.takeError();
    auto md = hashMapValue(*info + *mapOffset, range.begin + f->begin);
    if (!md) return md.takeError();
    if (*md) {
      block.methodDesc = *md;
      block.start = range.begin + f->begin;
      return block;
    }
    if (i == 0) break;
    --i;
  }
  block.start = range.begin + function->begin; // the method was never prepared: no MethodDesc to name it
  return block;
}

} // namespace stackwalk::frames
