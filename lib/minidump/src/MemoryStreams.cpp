// MemoryList, Memory64List, the threads' stack descriptors, and MemoryInfoList.
#include "Streams.h"

#include "stackwalk/core/ListedIds.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace stackwalk::minidump {
namespace {

constexpr size_t MaxRanges = 1 << 20;

// What the listed memory lost to the end of the file (a dump cut short) or to
// RVAs past it: said in one warning, not one per range, as a dump cut short
// lists hundreds of ranges past its end and would bury every other warning.
struct MemoryLoss {
  size_t ranges = 0, outside = 0, cutShort = 0;
  uint64_t bytesMissing = 0;
  std::vector<uint64_t> stacksCut; // threads whose stack the file does not hold whole

  void range(uint64_t claimed, uint64_t present) {
    ++ranges;
    if (present == claimed) return;
    ++(present == 0 ? outside : cutShort);
    bytesMissing += std::min(claimed - present, UINT64_MAX - bytesMissing);
  }

  std::string warning() const {
    std::vector<std::string> parts;
    if (outside || cutShort) {
      std::string lost = "of its " + std::to_string(ranges) + " memory ranges, ";
      if (outside) lost += std::to_string(outside) + (outside == 1 ? " lies" : " lie") + " outside the file";
      if (outside && cutShort) lost += " and ";
      if (cutShort) lost += std::to_string(cutShort) + (cutShort == 1 ? " runs" : " run") + " past its end";
      parts.push_back(lost + " (" + std::to_string(bytesMissing) + " bytes missing)");
    }
    if (!stacksCut.empty()) parts.push_back(stacksCutShort(stacksCut));
    if (parts.empty()) return "";
    return "the dump's memory is cut short: " + llvm::join(parts, "; ");
  }
};

// The range's bytes that the file holds, added to `ranges`; how many there are.
// RVA 0 is the dump's own header: a writer that means "elsewhere" (Wine's
// full-memory dumps name each thread's stack so, its bytes in Memory64List)
// has lost nothing.
std::optional<uint64_t> addRange(const Reader &reader, std::vector<DumpedRange> &ranges, uint64_t start, uint64_t rva,
                                 uint64_t size) {
  if (rva == 0) return std::nullopt;
  std::span<const uint8_t> bytes = reader.clip(rva, size);
  if (!bytes.empty() && ranges.size() < MaxRanges) ranges.push_back({start, bytes.size(), rva});
  return bytes.size();
}

} // namespace

std::vector<DumpedRange> readMemoryRanges(const Reader &reader) {
  std::vector<DumpedRange> ranges;
  MemoryLoss loss;
  if (auto stream = reader.stream(StreamType::MemoryList))
    for (const auto &d : reader.list<llvm::minidump::MemoryDescriptor>(*stream, "MemoryList"))
      if (auto present = addRange(reader, ranges, d.StartOfMemoryRange, d.Memory.RVA, d.Memory.DataSize))
        loss.range(d.Memory.DataSize, *present);
  // Memory64List: u64 count, u64 base RVA, then {start, size} pairs whose
  // bytes follow one another from the base RVA (full-memory dumps).
  if (auto stream = reader.stream(StreamType::Memory64List)) {
    auto count = reader.read<uint64_t>(*stream, 0);
    auto rva = reader.read<uint64_t>(*stream, 8);
    uint64_t fit = stream->size() < 16 ? 0 : (stream->size() - 16) / 16;
    if (count && rva) {
      if (*count > fit) reader.warn("Memory64List: " + std::to_string(*count) + " ranges claimed, " + std::to_string(fit) + " present");
      uint64_t at = *rva;
      for (uint64_t i = 0; i < std::min(*count, fit); ++i) {
        auto d = reader.read<llvm::minidump::MemoryDescriptor_64>(*stream, 16 + i * 16);
        if (auto present = addRange(reader, ranges, d->StartOfMemoryRange, at, d->DataSize))
          loss.range(d->DataSize, *present);
        if (d->DataSize > UINT64_MAX - at) break;
        at += d->DataSize;
      }
    }
  }
  // Thread stacks are normally in MemoryList too; some writers only name them here.
  if (auto stream = reader.stream(StreamType::ThreadList))
    for (const auto &t : reader.list<llvm::minidump::Thread>(*stream, "ThreadList")) {
      auto present = addRange(reader, ranges, t.Stack.StartOfMemoryRange, t.Stack.Memory.RVA, t.Stack.Memory.DataSize);
      if (present && *present < t.Stack.Memory.DataSize) loss.stacksCut.push_back(t.ThreadId);
    }
  if (std::string warning = loss.warning(); !warning.empty()) reader.warn(warning);
  return ranges;
}

std::vector<MemoryRegion> readMemoryInfo(const Reader &reader) {
  std::vector<MemoryRegion> regions;
  auto stream = reader.stream(StreamType::MemoryInfoList);
  if (!stream) return regions;
  constexpr uint32_t Commit = 0x1000;
  for (std::span<const uint8_t> entry :
       reader.sizedEntries(*stream, /*count64=*/true, sizeof(llvm::minidump::MemoryInfo), "MemoryInfoList")) {
    auto info = reader.read<llvm::minidump::MemoryInfo>(entry, 0);
    if (uint32_t(llvm::minidump::MemoryState(info->State)) != Commit || regions.size() >= MaxRanges) continue;
    uint32_t protect = uint32_t(llvm::minidump::MemoryProtection(info->Protect)) & 0xff;
    regions.push_back({info->BaseAddress, info->BaseAddress + info->RegionSize, (protect & 0xee) != 0,
                       (protect & 0xcc) != 0, (protect & 0xf0) != 0});
  }
  return regions;
}

} // namespace stackwalk::minidump
