#include "stackwalk/core/ElfNotes.h"

#include <cstring>

namespace stackwalk {
namespace {
uint32_t read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t align4(uint64_t v) { return (v + 3) & ~uint64_t(3); }
} // namespace

bool forEachElfNote(std::span<const uint8_t> bytes, const std::function<bool(const ElfNote &)> &visit) {
  uint64_t offset = 0;
  while (offset + 12 <= bytes.size()) {
    uint32_t nameSize = read32(&bytes[offset]);
    uint32_t descSize = read32(&bytes[offset + 4]);
    uint32_t type = read32(&bytes[offset + 8]);
    uint64_t nameStart = offset + 12;
    uint64_t descStart = nameStart + align4(nameSize);
    uint64_t end = descStart + align4(descSize);
    if (descStart > bytes.size() || descStart + descSize > bytes.size()) return false;
    std::string_view name(reinterpret_cast<const char *>(&bytes[nameStart]), nameSize);
    if (!name.empty() && name.back() == '\0') name.remove_suffix(1);
    if (!visit(ElfNote{name, type, bytes.subspan(descStart, descSize)})) return true;
    offset = end;
  }
  return offset >= bytes.size() || bytes.size() - offset < 12;
}

std::span<const uint8_t> findGnuBuildId(std::span<const uint8_t> noteBytes) {
  constexpr uint32_t NT_GNU_BUILD_ID = 3;
  std::span<const uint8_t> found;
  forEachElfNote(noteBytes, [&](const ElfNote &note) {
    if (note.type == NT_GNU_BUILD_ID && note.name == "GNU") {
      found = note.desc;
      return false;
    }
    return true;
  });
  return found;
}

} // namespace stackwalk
