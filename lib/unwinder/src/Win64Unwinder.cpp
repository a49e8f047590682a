#include "stackwalk/unwinder/Win64Unwinder.h"

#include "stackwalk/unwinder/Win64Unwind.h"

#include "llvm/ADT/StringExtras.h"

#include <array>

namespace stackwalk {
namespace {

constexpr uint64_t MaxEntries = 1 << 22;

std::optional<RuntimeFunction> readEntry(const Target &target, uint64_t address) {
  std::array<uint32_t, 3> raw;
  if (!target.read(address, {reinterpret_cast<uint8_t *>(raw.data()), sizeof raw})) return std::nullopt;
  return RuntimeFunction{raw[0], raw[1], raw[2]};
}

} // namespace

std::optional<Win64Unwinder::Directory> Win64Unwinder::exceptionDirectory(const Module &module, const Target &target) {
  auto cached = directories_.find(module.base);
  if (cached != directories_.end()) return cached->second;
  std::optional<Directory> &directory = directories_[module.base];
  // IMAGE_DOS_HEADER.e_lfanew -> "PE\0\0", IMAGE_FILE_HEADER (20 bytes), then
  // IMAGE_OPTIONAL_HEADER64: Magic 0x20b, NumberOfRvaAndSizes at 108, the
  // data directories at 112; the exception directory is entry 3.
  auto mz = target.readValue<uint16_t>(module.base);
  auto lfanew = target.readValue<uint32_t>(module.base + 0x3c);
  if (!mz || *mz != 0x5a4d || !lfanew || *lfanew > 4096) return directory;
  uint64_t pe = module.base + *lfanew;
  auto signature = target.readValue<uint32_t>(pe);
  auto magic = target.readValue<uint16_t>(pe + 24);
  auto count = target.readValue<uint32_t>(pe + 24 + 108);
  auto rva = target.readValue<uint32_t>(pe + 24 + 112 + 3 * 8);
  auto size = target.readValue<uint32_t>(pe + 24 + 112 + 3 * 8 + 4);
  if (signature != 0x4550u || magic != 0x20bu || !count || *count <= 3 || !rva || !size) return directory;
  directory = Directory{*rva, *size};
  return directory;
}

UnwindResult Win64Unwinder::unwind(const Frame &frame, const Target &target) {
  if (!frame.module) return UnwindResult::noInfo("no module covers 0x" + llvm::utohexstr(frame.ip, true));
  const Module &module = *frame.module;
  std::optional<Directory> directory = exceptionDirectory(module, target);
  if (!directory) return UnwindResult::noInfo("no PE exception directory for " + module.name);
  uint64_t rva = frame.lookupAddress() - module.base;
  uint64_t table = module.base + directory->rva;
  uint64_t lo = 0, hi = std::min<uint64_t>(directory->size / 12, MaxEntries);
  // The last entry beginning at or before the pc.
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    auto entry = readEntry(target, table + mid * 12);
    if (!entry) return UnwindResult::noInfo(module.name + "'s .pdata is not readable");
    if (entry->begin <= rva) lo = mid + 1;
    else hi = mid;
  }
  std::optional<RuntimeFunction> function = lo ? readEntry(target, table + (lo - 1) * 12) : std::nullopt;
  // No entry: a leaf function, which neither saves registers nor moves the
  // stack pointer, so the return address is at the stack pointer.
  if (!function || rva >= function->end) return unwindWin64Leaf(target, frame);
  auto result = unwindWin64(target, module.base, *function, frame);
  if (!result) return UnwindResult::noInfo(module.name + ": " + llvm::toString(result.takeError()));
  return *result;
}

} // namespace stackwalk
