#include "stackwalk/core/Auxv.h"

#include "llvm/Support/Endian.h"

namespace stackwalk {

std::vector<std::pair<uint64_t, uint64_t>> parseAuxv(std::span<const uint8_t> bytes, unsigned wordSize) {
  auto word = [&](size_t offset) -> uint64_t {
    return wordSize == 4 ? llvm::support::endian::read32le(bytes.data() + offset)
                         : llvm::support::endian::read64le(bytes.data() + offset);
  };
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t offset = 0; offset + 2 * wordSize <= bytes.size(); offset += 2 * wordSize) {
    uint64_t type = word(offset);
    if (type == 0) break; // AT_NULL
    out.emplace_back(type, word(offset + wordSize));
  }
  return out;
}

std::optional<uint64_t> auxvValue(const std::vector<std::pair<uint64_t, uint64_t>> &auxv, uint64_t type) {
  for (auto [key, value] : auxv)
    if (key == type) return value;
  return std::nullopt;
}

} // namespace stackwalk
