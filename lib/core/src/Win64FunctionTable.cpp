#include "stackwalk/core/Win64FunctionTable.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "PeHeaders.h"

#include <algorithm>
#include <array>

namespace stackwalk {
namespace {

constexpr uint64_t MaxEntries = 1 << 22;
constexpr unsigned ChainLimit = 32;
constexpr uint8_t UnwFlagChainInfo = 0x4;

} // namespace

llvm::Expected<Win64FunctionTable> Win64FunctionTable::read(const MemorySource &memory, uint64_t imageBase) {
  auto headers = readPe32PlusHeaders(memory, imageBase);
  if (!headers) return headers.takeError();
  if (headers->peOffset > 4096) return fail("the PE header is farther than 4 KiB into the image");
  if (headers->optional.NumberOfRvaAndSize <= llvm::COFF::EXCEPTION_TABLE) return fail("no exception directory");
  // The data directories follow the optional header's fixed part.
  auto directory = memory.readValue<llvm::object::data_directory>(
      headers->optionalAddress + sizeof(llvm::object::pe32plus_header) +
      llvm::COFF::EXCEPTION_TABLE * sizeof(llvm::object::data_directory));
  if (!directory) return fail("its data directories are not in the dump's memory");
  if (!directory->RelativeVirtualAddress || !directory->Size) return fail("no exception directory");
  bool arm64 = headers->file.Machine == llvm::COFF::IMAGE_FILE_MACHINE_ARM64;
  return Win64FunctionTable(imageBase, directory->RelativeVirtualAddress, directory->Size, arm64);
}

llvm::Expected<RuntimeFunction> Win64FunctionTable::entryAt(const MemorySource &memory, uint64_t address) const {
  std::array<uint32_t, 3> raw;
  if (!memory.read(address, {reinterpret_cast<uint8_t *>(raw.data()), size_t(entrySize())}))
    return fail("the RUNTIME_FUNCTION at " + hex(address) + " is not readable");
  if (!arm64_) return RuntimeFunction{raw[0], raw[1], raw[2]};
  auto length = arm64FunctionLength(memory, imageBase_, raw[1]);
  if (!length) return length.takeError();
  return RuntimeFunction{raw[0], raw[0] + *length, raw[1]};
}

llvm::Expected<uint32_t> arm64FunctionLength(const MemorySource &memory, uint64_t imageBase, uint32_t unwindData) {
  // Packed: FunctionLength in bits 2-12; else .xdata's first word, bits 0-17; in instructions.
  if (unwindData & 3) return ((unwindData >> 2) & 0x7ff) * 4;
  auto header = memory.readValue<uint32_t>(imageBase + unwindData);
  if (!header) return fail("the .xdata at " + hex(imageBase + unwindData) + " is not readable");
  return (*header & 0x3ffff) * 4;
}

llvm::Expected<std::optional<RuntimeFunction>> Win64FunctionTable::entryCovering(const MemorySource &memory,
                                                                                 uint64_t rva) const {
  uint64_t table = imageBase_ + rva_;
  uint64_t lo = 0, hi = std::min<uint64_t>(size_ / entrySize(), MaxEntries);
  // The last entry beginning at or before rva (the table is sorted).
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    auto entry = entryAt(memory, table + mid * entrySize());
    if (!entry) return entry.takeError();
    if (entry->begin <= rva) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return std::nullopt;
  auto entry = entryAt(memory, table + (lo - 1) * entrySize());
  if (!entry) return entry.takeError();
  if (rva >= entry->end) return std::nullopt;
  return *entry;
}

llvm::Expected<uint32_t> Win64FunctionTable::functionStart(const MemorySource &memory, RuntimeFunction entry) const {
  if (arm64_) return entry.begin; // ARM64 fragments name no parent entry
  for (unsigned depth = 0;; ++depth) {
    if (depth > ChainLimit) return fail("chained RUNTIME_FUNCTIONs loop");
    if (entry.unwindInfo & 1) { // an indirect entry: UnwindData names another RUNTIME_FUNCTION
      auto next = entryAt(memory, imageBase_ + (entry.unwindInfo & ~1u));
      if (!next) return next.takeError();
      entry = *next;
      continue;
    }
    // UNWIND_INFO: version and flags, prolog size, code count, frame register;
    // chained info puts the parent entry after the codes (padded to even).
    auto header = memory.readValue<uint32_t>(imageBase_ + entry.unwindInfo);
    if (!header) return fail("the UNWIND_INFO at " + hex(imageBase_ + entry.unwindInfo) + " is not readable");
    uint8_t flags = uint8_t(*header & 0xff) >> 3, codes = uint8_t(*header >> 16);
    if (!(flags & UnwFlagChainInfo)) return entry.begin;
    auto parent = entryAt(memory, imageBase_ + entry.unwindInfo + 4 + 2 * uint64_t((codes + 1) & ~1));
    if (!parent) return parent.takeError();
    entry = *parent;
  }
}

llvm::Expected<std::optional<RuntimeFunction>> runtimeFunctionCovering(const MemorySource &memory,
                                                                       uint64_t imageBase, uint64_t address) {
  auto table = Win64FunctionTable::read(memory, imageBase);
  if (!table)
    return fail("the image at " + hex(imageBase) + " has no readable PE exception directory: " +
                llvm::toString(table.takeError()));
  return table->entryCovering(memory, address - imageBase);
}

} // namespace stackwalk
