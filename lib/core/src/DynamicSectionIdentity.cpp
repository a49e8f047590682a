#include "stackwalk/core/DynamicSectionIdentity.h"

#include "stackwalk/core/Hex.h"

#include "llvm/BinaryFormat/ELF.h"

#include <cstring>

namespace stackwalk {
namespace {

struct DynamicEntry {
  int64_t tag;
  uint64_t value;
};

// An Elf64_Dyn, or an Elf32_Dyn (`wordSize` 4), widened.
DynamicEntry entryAt(const uint8_t *bytes, unsigned wordSize) {
  if (wordSize == 4) {
    int32_t tag;
    uint32_t value;
    std::memcpy(&tag, bytes, 4);
    std::memcpy(&value, bytes + 4, 4);
    return {tag, value};
  }
  DynamicEntry entry;
  std::memcpy(&entry.tag, bytes, 8);
  std::memcpy(&entry.value, bytes + 8, 8);
  return entry;
}

// Whether a loaded entry is the file's: the same tag and value, or, since
// the dynamic linker fills some in (glibc's elf_get_dynamic_info relocates the
// address-valued entries in place where the section is writable, and sets
// DT_DEBUG), the value moved by the load bias, or any DT_DEBUG.
bool sameEntry(const DynamicEntry &file, const DynamicEntry &loaded, uint64_t bias, uint64_t mask) {
  if (file.tag != loaded.tag) return false;
  return file.tag == llvm::ELF::DT_DEBUG || loaded.value == file.value || loaded.value == ((file.value + bias) & mask);
}

} // namespace

std::optional<std::string> dynamicSectionMismatch(const Module &module, const ModuleImage &image) {
  if (module.dynamicSection.empty()) return std::nullopt;
  auto file = image.section(".dynamic");
  if (!file) return std::string("no dynamic section");
  uint64_t bias = module.base - image.preferredBase();
  if (file->address + bias != module.dynamicAddress)
    return "its dynamic section would be at " + hex(file->address + bias) + ", not " + hex(module.dynamicAddress);
  unsigned wordSize = image.object().getBytesInAddress();
  uint64_t mask = wordSize == 4 ? 0xffffffffu : ~uint64_t(0);
  size_t entrySize = 2 * wordSize;
  size_t entries = std::min(file->data.size(), module.dynamicSection.size()) / entrySize;
  const auto *fileBytes = reinterpret_cast<const uint8_t *>(file->data.data());
  for (size_t i = 0; i < entries; ++i) {
    DynamicEntry fileEntry = entryAt(fileBytes + entrySize * i, wordSize);
    DynamicEntry loaded = entryAt(module.dynamicSection.data() + entrySize * i, wordSize);
    if (!sameEntry(fileEntry, loaded, bias, mask)) return "dynamic entry " + std::to_string(i) + " differs";
    if (fileEntry.tag == llvm::ELF::DT_NULL) return std::nullopt;
  }
  return entries == 0 ? std::optional<std::string>("an empty dynamic section") : std::nullopt;
}

} // namespace stackwalk
