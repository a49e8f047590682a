#include "stackwalk/core/FxsaveArea.h"

#include "llvm/Support/Endian.h"

#include <cstring>

namespace stackwalk {
namespace {

// Offsets in the FXSAVE image.
constexpr size_t Fcw = 0, Fsw = 2, Fop = 6, Mxcsr = 24, StRegisters = 32, XmmRegisters = 160;
// The XSAVE header after them, and the AVX component in the standard format.
constexpr size_t XstateBv = 512, XcompBv = 520, AvxUpperHalves = 576, AvxBytes = 256;
constexpr uint64_t AvxComponent = 1 << 2, CompactedFormat = uint64_t(1) << 63;

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

bool FxsaveArea::addXsave(std::span<const uint8_t> bytes) {
  using llvm::support::endian::read64le;
  if (bytes.size() < AvxUpperHalves + AvxBytes || (read64le(bytes.data() + XcompBv) & CompactedFormat)) return false;
  ymmUpper.emplace(); // zeros: the initial state
  if (read64le(bytes.data() + XstateBv) & AvxComponent)
    for (size_t i = 0; i < ymmUpper->size(); ++i)
      std::memcpy((*ymmUpper)[i].data(), bytes.data() + AvxUpperHalves + 16 * i, 16);
  return true;
}

std::vector<std::pair<std::string, std::string>> FxsaveArea::registers() const {
  std::vector<std::pair<std::string, std::string>> out{
      {"fctrl", hexOf(fcw)}, {"fstat", hexOf(fsw)}, {"fop", hexOf(fop)}, {"mxcsr", hexOf(mxcsr)}};
  for (size_t i = 0; i < st.size(); ++i) out.emplace_back("st" + std::to_string(i), hexOf(st[i]));
  for (size_t i = 0; i < xmm.size(); ++i) out.emplace_back("xmm" + std::to_string(i), hexOf(xmm[i]));
  if (ymmUpper)
    for (size_t i = 0; i < xmm.size(); ++i) {
      std::array<uint8_t, 32> ymm; // little-endian: the xmm half first
      std::memcpy(ymm.data(), xmm[i].data(), 16);
      std::memcpy(ymm.data() + 16, (*ymmUpper)[i].data(), 16);
      out.emplace_back("ymm" + std::to_string(i), hexOf(ymm));
    }
  return out;
}

} // namespace stackwalk
