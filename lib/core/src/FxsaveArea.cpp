#include "stackwalk/core/FxsaveArea.h"

#include "llvm/Support/Endian.h"

#include <cstring>

namespace stackwalk {
namespace {

// Offsets in the FXSAVE image.
constexpr size_t Fcw = 0, Fsw = 2, Fop = 6, Mxcsr = 24, StRegisters = 32, XmmRegisters = 160;

template <size_t N> std::string hexOf(const std::array<uint8_t, N> &littleEndian) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "0x";
  for (size_t i = N; i-- > 0;) {
    out += digits[littleEndian[i] >> 4];
    out += digits[littleEndian[i] & 15];
  }
  return out;
}

template <typename T> std::string hexOf(T value) {
  std::array<uint8_t, sizeof(T)> bytes;
  llvm::support::endian::write<T, llvm::endianness::little>(bytes.data(), value);
  return hexOf(bytes);
}

} // namespace

std::optional<FxsaveArea> FxsaveArea::parse(std::span<const uint8_t> bytes) {
  if (bytes.size() < Size) return std::nullopt;
  using llvm::support::endian::read16le, llvm::support::endian::read32le;
  FxsaveArea area;
  area.fcw = read16le(bytes.data() + Fcw);
  area.fsw = read16le(bytes.data() + Fsw);
  area.fop = read16le(bytes.data() + Fop);
  area.mxcsr = read32le(bytes.data() + Mxcsr);
  for (size_t i = 0; i < area.st.size(); ++i) // each in a 16-byte slot
    std::memcpy(area.st[i].data(), bytes.data() + StRegisters + 16 * i, area.st[i].size());
  for (size_t i = 0; i < area.xmm.size(); ++i)
    std::memcpy(area.xmm[i].data(), bytes.data() + XmmRegisters + 16 * i, area.xmm[i].size());
  return area;
}

std::vector<std::pair<std::string, std::string>> FxsaveArea::registers() const {
  std::vector<std::pair<std::string, std::string>> out{
      {"fctrl", hexOf(fcw)}, {"fstat", hexOf(fsw)}, {"fop", hexOf(fop)}, {"mxcsr", hexOf(mxcsr)}};
  for (size_t i = 0; i < st.size(); ++i) out.emplace_back("st" + std::to_string(i), hexOf(st[i]));
  for (size_t i = 0; i < xmm.size(); ++i) out.emplace_back("xmm" + std::to_string(i), hexOf(xmm[i]));
  return out;
}

} // namespace stackwalk
