#include "EhFrameSearch.h"

#include "llvm/DebugInfo/DWARF/DWARFDataExtractor.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugFrame.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstring>

using namespace llvm;

namespace stackwalk {

namespace {

// The smallest record after its length word: an FDE's CIE pointer and two
// 4-byte addresses (a CIE's id, version, augmentation and three fields are less).
constexpr uint32_t MinRecordLength = 8;
// eh_frame records are 4-byte aligned; the section itself at least as much.
constexpr uint64_t RecordAlignment = 4;

struct Chain {
  uint64_t begin, end; // end: past the zero terminator
  size_t fdes;
};

uint32_t word(ArrayRef<uint8_t> bytes, uint64_t at) { return support::endian::read32le(bytes.data() + at); }

// A CIE header at `at` (its length word): id 0, version 1 or 3, and an
// augmentation string of the letters GCC and LLVM write, beginning with 'z'
// (every eh_frame CIE a linker keeps has one: it says how FDEs encode pointers).
bool looksLikeCie(ArrayRef<uint8_t> bytes, uint64_t at, uint32_t length) {
  uint64_t end = at + 4 + length;
  if (word(bytes, at + 4) != 0 || end > bytes.size() || length < MinRecordLength) return false;
  uint8_t version = bytes[at + 8];
  if (version != 1 && version != 3) return false;
  uint64_t augmentation = at + 9;
  if (augmentation >= end || bytes[augmentation] != 'z') return false;
  for (uint64_t i = augmentation + 1; i < end; ++i) {
    if (bytes[i] == 0) return true;
    if (!std::strchr("RPLSBG", bytes[i])) return false;
  }
  return false;
}

// The records from `begin` on, if they chain to a zero terminator: each length
// inside the bytes, each FDE's CIE pointer naming a CIE met before it. A record
// an earlier walk reached (`visited`, by 4-byte word) ends the walk: that walk
// began before this one and failed from there on (one that succeeded was
// stepped over), so the search reads each word as a record start at most once.
std::optional<Chain> chainAt(ArrayRef<uint8_t> bytes, uint64_t begin, std::vector<bool> &visited) {
  std::vector<uint64_t> cies;
  size_t fdes = 0;
  for (uint64_t at = begin; at + 4 <= bytes.size();) {
    if (visited[at / RecordAlignment]) return std::nullopt;
    visited[at / RecordAlignment] = true;
    uint32_t length = word(bytes, at);
    if (length == 0) return fdes ? std::optional(Chain{begin, at + 4, fdes}) : std::nullopt;
    if (length < MinRecordLength || length > bytes.size() - at - 4 || length % RecordAlignment) return std::nullopt;
    uint32_t id = word(bytes, at + 4);
    if (id == 0) {
      if (!looksLikeCie(bytes, at, length)) return std::nullopt;
      cies.push_back(at);
    } else {
      // The CIE pointer counts back from its own field.
      if (id > at + 4 - begin || !std::binary_search(cies.begin(), cies.end(), at + 4 - id)) return std::nullopt;
      ++fdes;
    }
    at += 4 + length;
  }
  return std::nullopt;
}

bool inCode(const std::vector<CodeRange> &code, uint64_t begin, uint64_t size) {
  return std::any_of(code.begin(), code.end(), [&](const CodeRange &range) {
    return begin >= range.begin && begin < range.end && size <= range.end - begin;
  });
}

// Whether LLVM parses the chain's records (its terminator left out) and every
// FDE describes code the image maps.
bool describesCode(ArrayRef<uint8_t> bytes, const Chain &chain, uint64_t address, unsigned addressSize,
                   Triple::ArchType arch, const std::vector<CodeRange> &code) {
  StringRef records(reinterpret_cast<const char *>(bytes.data()) + chain.begin, chain.end - 4 - chain.begin);
  DWARFDebugFrame frame(arch, /*IsEH=*/true, address + chain.begin);
  if (Error err = frame.parse(DWARFDataExtractor(records, true, uint8_t(addressSize)))) {
    consumeError(std::move(err));
    return false;
  }
  return std::all_of(frame.begin(), frame.end(), [&](const dwarf::FrameEntry &entry) {
    auto *fde = dyn_cast<dwarf::FDE>(&entry);
    return !fde || inCode(code, fde->getInitialLocation(), fde->getAddressRange());
  });
}

} // namespace

std::optional<EhFrameBounds> findEhFrame(ArrayRef<uint8_t> bytes, uint64_t address, unsigned addressSize,
                                         Triple::ArchType arch, const std::vector<CodeRange> &code) {
  std::optional<Chain> best;
  std::vector<bool> visited(bytes.size() / RecordAlignment + 1);
  for (uint64_t at = 0; at + 12 <= bytes.size(); at += RecordAlignment) {
    uint32_t length = word(bytes, at);
    if (!looksLikeCie(bytes, at, length)) continue;
    std::optional<Chain> chain = chainAt(bytes, at, visited);
    if (!chain) continue;
    if (describesCode(bytes, *chain, address, addressSize, arch, code) && (!best || chain->fdes > best->fdes))
      best = chain;
    at = chain->end - RecordAlignment; // a chain's own records start no other
  }
  if (!best) return std::nullopt;
  return EhFrameBounds{best->begin, best->end - best->begin};
}

} // namespace stackwalk
