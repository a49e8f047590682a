// MemoryList, Memory64List, the threads' stack descriptors, and MemoryInfoList.
#include "Streams.h"

#include "llvm/ADT/StringExtras.h"

namespace stackwalk::minidump {
namespace {

constexpr size_t MaxRanges = 1 << 20;

void addRange(const Reader &reader, std::vector<MemoryRange> &ranges, uint64_t start, uint64_t rva, uint64_t size,
              const std::string &what) {
  // RVA 0 is the dump's own header: a writer that means "elsewhere" (Wine's
  // full-memory dumps name each thread's stack so, its bytes in Memory64List).
  if (rva == 0) return;
  std::span<const uint8_t> bytes = reader.slice(rva, size, what);
  if (!bytes.empty() && ranges.size() < MaxRanges) ranges.push_back({start, bytes.size(), rva});
}

} // namespace

std::vector<MemoryRange> readMemoryRanges(const Reader &reader) {
  std::vector<MemoryRange> ranges;
  if (auto stream = reader.stream(StreamType::MemoryList))
    for (const auto &d : reader.list<llvm::minidump::MemoryDescriptor>(*stream, "MemoryList"))
      addRange(reader, ranges, d.StartOfMemoryRange, d.Memory.RVA, d.Memory.DataSize,
               "memory at 0x" + llvm::utohexstr(d.StartOfMemoryRange, true));
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
        addRange(reader, ranges, d->StartOfMemoryRange, at, d->DataSize,
                 "memory at 0x" + llvm::utohexstr(d->StartOfMemoryRange, true));
        if (d->DataSize > UINT64_MAX - at) break;
        at += d->DataSize;
      }
    }
  }
  // Thread stacks are normally in MemoryList too; some writers only name them here.
  if (auto stream = reader.stream(StreamType::ThreadList))
    for (const auto &t : reader.list<llvm::minidump::Thread>(*stream, "ThreadList"))
      addRange(reader, ranges, t.Stack.StartOfMemoryRange, t.Stack.Memory.RVA, t.Stack.Memory.DataSize,
               "thread " + std::to_string(t.ThreadId) + "'s stack");
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
