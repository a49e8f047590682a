#include "CfiSection.h"

#include "CfaGnuRewrite.h"

#include "stackwalk/core/Fail.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFDataExtractor.h"

#include <algorithm>

using namespace llvm;
using namespace llvm::dwarf;

namespace stackwalk {
namespace {

constexpr size_t MaxIndexedFdes = 1 << 22;

// The length and id fields that start every CIE and FDE.
struct EntryHeader {
  uint64_t offset = 0;        // of the length field
  uint64_t length = 0;        // after the length field
  uint64_t idOffset = 0;      // of the CIE id / CIE pointer field
  uint64_t contentOffset = 0; // after the id field
  uint64_t end = 0;
  uint64_t id = 0;
  bool dwarf64 = false;
};

// Moves a cursor, dropping any error it holds: LLVM's Error leaks its payload
// when overwritten unchecked in builds without ABI-breaking checks.
void moveCursor(DataExtractor::Cursor &cursor, uint64_t offset) {
  consumeError(cursor.takeError());
  cursor = DataExtractor::Cursor(offset);
}

Expected<EntryHeader> readHeader(const DWARFDataExtractor &data, uint64_t offset) {
  EntryHeader header;
  header.offset = offset;
  DataExtractor::Cursor cursor(offset);
  uint64_t length = data.getU32(cursor);
  if (length == 0xffffffff) {
    header.dwarf64 = true;
    length = data.getU64(cursor);
  }
  header.length = length;
  header.idOffset = cursor.tell();
  if (!cursor) return cursor.takeError();
  if (length == 0) return header; // a terminator
  if (length > data.size() - header.idOffset) return fail("CFI entry at 0x" + Twine::utohexstr(offset) + " runs past the section");
  header.end = header.idOffset + length;
  header.id = header.dwarf64 ? data.getU64(cursor) : data.getU32(cursor);
  header.contentOffset = cursor.tell();
  if (!cursor) return cursor.takeError();
  return header;
}

} // namespace

struct CfiSection::FdeHeader {
  bool dwarf64 = false;
  uint64_t length = 0, cieOffset = 0;
  uint64_t begin = 0, range = 0;
  uint64_t programOffset = 0, end = 0;
  CIE *cie = nullptr;
};

Error CfiSection::parseProgram(CFIProgram &program, uint64_t entryOffset, uint64_t begin, uint64_t end) {
  // A header that ran past its entry's end leaves no program to parse.
  if (begin > end || end > data_.size())
    return fail("the CFI entry at 0x" + Twine::utohexstr(entryOffset) + " is shorter than its header");
  std::span<const uint8_t> bytes(data_.bytes_begin() + begin, end - begin);
  if (auto rewritten = rewriteGnuNegativeOffsets(bytes, addressSize_)) {
    // The parsed program points into its bytes, so they live as long as the section.
    std::vector<uint8_t> &storage = rewritten_[entryOffset] = std::move(*rewritten);
    DWARFDataExtractor data(StringRef(reinterpret_cast<const char *>(storage.data()), storage.size()), true,
                            addressSize_);
    uint64_t at = 0;
    return program.parse(data, &at, storage.size());
  }
  DWARFDataExtractor data(data_, true, addressSize_);
  return program.parse(data, &begin, end);
}

CfiSection::CfiSection(Kind kind, StringRef data, uint64_t address, Triple::ArchType arch, StringRef hdr,
                       uint64_t hdrAddress)
    : kind_(kind), data_(data), address_(address), arch_(arch),
      addressSize_(Triple::getArchPointerBitWidth(arch) == 32 ? 4 : 8), hdr_(hdr), hdrAddress_(hdrAddress) {}

CfiSection::~CfiSection() = default;

Expected<CIE *> CfiSection::cieAt(uint64_t offset) {
  auto found = cies_.find(offset);
  if (found != cies_.end()) return found->second.get();
  DWARFDataExtractor data(data_, true, addressSize_);
  auto header = readHeader(data, offset);
  if (!header) return header.takeError();
  bool isCie = kind_ == Kind::EhFrame ? header->id == 0
                                       : header->id == (header->dwarf64 ? UINT64_MAX : 0xffffffffu);
  if (header->length == 0 || !isCie) return fail("no CIE at 0x" + Twine::utohexstr(offset));

  DataExtractor::Cursor cursor(header->contentOffset);
  uint8_t version = data.getU8(cursor);
  StringRef augmentation = data.getCStrRef(cursor);
  uint8_t addressSize = addressSize_, segmentSize = 0;
  if (kind_ == Kind::DebugFrame && version >= 4) {
    addressSize = data.getU8(cursor);
    segmentSize = data.getU8(cursor);
  }
  uint64_t codeAlign = data.getULEB128(cursor);
  int64_t dataAlign = data.getSLEB128(cursor);
  uint64_t raRegister = version == 1 ? data.getU8(cursor) : data.getULEB128(cursor);
  uint32_t fdeEncoding = DW_EH_PE_absptr, lsdaEncoding = DW_EH_PE_omit;
  std::optional<uint64_t> personality;
  std::optional<uint32_t> personalityEncoding;
  SmallString<8> augmentationData;
  if (!augmentation.empty() && augmentation.front() == 'z') {
    uint64_t augLength = data.getULEB128(cursor);
    uint64_t augStart = cursor.tell();
    if (augLength > header->end - std::min(augStart, header->end)) return fail("CIE augmentation data too long");
    augmentationData = data_.substr(augStart, augLength);
    for (char c : augmentation.drop_front()) {
      if (c == 'R') {
        fdeEncoding = data.getU8(cursor);
      } else if (c == 'L') {
        lsdaEncoding = data.getU8(cursor);
      } else if (c == 'P') {
        personalityEncoding = data.getU8(cursor);
        uint64_t at = cursor.tell();
        personality = data.getEncodedPointer(&at, uint8_t(*personalityEncoding), address_ + at);
        moveCursor(cursor, at);
      }
    }
    moveCursor(cursor, augStart + augLength);
  } else if (!augmentation.empty() && augmentation != "S") {
    return fail("unsupported CIE augmentation \"" + augmentation + "\"");
  }
  if (!cursor) return cursor.takeError();
  auto cie = std::make_unique<CIE>(header->dwarf64, offset, header->length, version, SmallString<8>(augmentation),
                                   addressSize, segmentSize, codeAlign, dataAlign, raRegister, augmentationData,
                                   fdeEncoding, lsdaEncoding, personality, personalityEncoding, arch_);
  if (Error err = parseProgram(cie->cfis(), offset, cursor.tell(), header->end)) return err;
  CIE *result = cie.get();
  cies_[offset] = std::move(cie);
  return result;
}

Expected<CfiSection::FdeHeader> CfiSection::parseFdeHeader(uint64_t offset) {
  DWARFDataExtractor data(data_, true, addressSize_);
  auto header = readHeader(data, offset);
  if (!header) return header.takeError();
  if (header->length == 0) return fail("FDE offset points at a terminator");
  uint64_t cieOffset = kind_ == Kind::EhFrame ? header->idOffset - header->id : header->id;
  if (kind_ == Kind::EhFrame && header->id > header->idOffset) return fail("FDE's CIE pointer is out of range");
  auto cie = cieAt(cieOffset);
  if (!cie) return cie.takeError();

  uint64_t at = header->contentOffset;
  uint64_t begin, range;
  if (kind_ == Kind::EhFrame) {
    uint8_t encoding = uint8_t((*cie)->getFDEPointerEncoding());
    // LLVM adds the pcrel base as given: it must be the field's own address.
    auto b = data.getEncodedPointer(&at, encoding, address_ + at);
    auto r = data.getEncodedPointer(&at, encoding & 0x0f, 0);
    if (!b || !r) return fail("FDE at 0x" + Twine::utohexstr(offset) + " has an unsupported pointer encoding");
    begin = *b;
    range = *r;
    if (!(*cie)->getAugmentationString().empty() && (*cie)->getAugmentationString().front() == 'z') {
      DataExtractor::Cursor cursor(at);
      uint64_t augLength = data.getULEB128(cursor);
      if (!cursor) return cursor.takeError();
      at = cursor.tell() + augLength;
    }
  } else {
    DataExtractor::Cursor cursor(at);
    begin = data.getUnsigned(cursor, addressSize_);
    range = data.getUnsigned(cursor, addressSize_);
    if (!cursor) return cursor.takeError();
    at = cursor.tell();
  }
  if (at > header->end) return fail("FDE header runs past its end");
  return FdeHeader{header->dwarf64, header->length, cieOffset, begin, range, at, header->end, *cie};
}

// Size of one field of .eh_frame_hdr's table, or 0 for a table we cannot search.
static unsigned hdrTableFieldSize(uint8_t tableEncoding) {
  switch (tableEncoding) {
  case DW_EH_PE_datarel | DW_EH_PE_sdata4: case DW_EH_PE_datarel | DW_EH_PE_udata4: return 4;
  case DW_EH_PE_datarel | DW_EH_PE_sdata8: case DW_EH_PE_datarel | DW_EH_PE_udata8: return 8;
  default: return 0;
  }
}

bool CfiSection::hasUsableHdr() const {
  // version 1, eh_frame_ptr encoding, fde_count encoding, table encoding
  return kind_ == Kind::EhFrame && hdr_.size() >= 4 && hdr_[0] == 1 && hdrTableFieldSize(uint8_t(hdr_[3])) != 0;
}

std::optional<uint64_t> CfiSection::lookupHdr(uint64_t address) const {
  uint8_t tableEncoding = uint8_t(hdr_[3]);
  unsigned entrySize = hdrTableFieldSize(tableEncoding);
  DWARFDataExtractor data(hdr_, true, addressSize_);
  uint64_t at = 4;
  if (!data.getEncodedPointer(&at, uint8_t(hdr_[1]), hdrAddress_ + at)) return std::nullopt;
  auto count = data.getEncodedPointer(&at, uint8_t(hdr_[2]), hdrAddress_ + at);
  if (!count || *count == 0 || *count > (hdr_.size() - at) / (2 * entrySize)) return std::nullopt;
  bool isSigned = (tableEncoding & 0x0f) == DW_EH_PE_sdata4 || (tableEncoding & 0x0f) == DW_EH_PE_sdata8;
  auto field = [&](uint64_t index, unsigned which) {
    uint64_t pos = at + (index * 2 + which) * entrySize;
    uint64_t raw = entrySize == 4 ? data.getU32(&pos) : data.getU64(&pos);
    if (isSigned && entrySize == 4) raw = uint64_t(int64_t(int32_t(raw)));
    return hdrAddress_ + raw;
  };
  // The last entry whose initial location is <= address.
  uint64_t lo = 0, hi = *count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (field(mid, 0) <= address) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return std::nullopt;
  uint64_t fdeAddress = field(lo - 1, 1);
  if (fdeAddress < address_ || fdeAddress - address_ >= data_.size()) return std::nullopt;
  return fdeAddress - address_;
}

void CfiSection::buildIndex() {
  index_.emplace();
  DWARFDataExtractor data(data_, true, addressSize_);
  for (uint64_t offset = 0; offset < data_.size() && index_->size() < MaxIndexedFdes;) {
    auto header = readHeader(data, offset);
    if (!header) {
      unindexed_ = "the entries from offset " + std::to_string(offset) + " on are not read: " + toString(header.takeError());
      break;
    }
    if (header->length == 0) {
      // A terminator ends .eh_frame; in .debug_frame there is none.
      if (kind_ == Kind::EhFrame) break;
      offset = header->idOffset;
      continue;
    }
    bool isCie = kind_ == Kind::EhFrame ? header->id == 0
                                         : header->id == (header->dwarf64 ? UINT64_MAX : 0xffffffffu);
    // Only the headers: a damaged program is reported when its FDE is used.
    if (!isCie) {
      if (auto fde = parseFdeHeader(offset))
        index_->push_back({fde->begin, fde->begin + fde->range, offset});
      else
        consumeError(fde.takeError());
    }
    offset = header->end;
  }
  std::sort(index_->begin(), index_->end(), [](const Range &a, const Range &b) { return a.begin < b.begin; });
}

std::optional<uint64_t> CfiSection::lookupIndex(uint64_t address) {
  if (!index_) buildIndex();
  auto it = std::upper_bound(index_->begin(), index_->end(), address,
                             [](uint64_t a, const Range &r) { return a < r.begin; });
  // Ranges may nest or overlap in damaged CFI; look back a little.
  for (int back = 0; back < 4 && it != index_->begin(); ++back) {
    --it;
    if (address < it->end) return it->offset;
  }
  return std::nullopt;
}

Expected<const CfiSection::Entry *> CfiSection::find(uint64_t address) {
  // A usable .eh_frame_hdr is authoritative: an address it does not cover has
  // no FDE, and walking the whole section to be sure would cost every miss.
  std::optional<uint64_t> offset = hasUsableHdr() ? lookupHdr(address) : lookupIndex(address);
  if (!offset) {
    // Past a damaged entry header nothing is known: a miss may be an entry not read.
    if (!hasUsableHdr() && !unindexed_.empty()) return fail(unindexed_);
    return nullptr;
  }
  // A damaged FDE is parsed once and its reason given every time it is asked.
  if (auto damaged = damaged_.find(*offset); damaged != damaged_.end()) return fail(damaged->second);
  auto cached = entries_.find(*offset);
  if (cached != entries_.end()) {
    const Entry *entry = cached->second.get();
    uint64_t begin = entry->fde->getInitialLocation();
    return address >= begin && address - begin < entry->fde->getAddressRange() ? entry : nullptr;
  }
  auto remember = [&](Error err) {
    std::string why = toString(std::move(err));
    damaged_[*offset] = why;
    return fail(why);
  };
  auto header = parseFdeHeader(*offset);
  if (!header) return remember(header.takeError());
  auto fde = std::make_unique<FDE>(header->dwarf64, *offset, header->length, header->cieOffset, header->begin,
                                   header->range, header->cie, std::nullopt, arch_);
  if (Error err = parseProgram(fde->cfis(), *offset, header->programOffset, header->end))
    return remember(std::move(err));
  auto table = UnwindTable::create(fde.get());
  if (!table) return remember(table.takeError());
  auto entry = std::make_unique<Entry>(Entry{std::move(fde), std::move(*table), false,
                                             header->cie->getReturnAddressRegister()});
  entry->signalFrame = header->cie->getAugmentationString().contains('S');
  const Entry *result = entry.get();
  entries_[*offset] = std::move(entry);
  uint64_t begin = result->fde->getInitialLocation();
  return address >= begin && address - begin < result->fde->getAddressRange() ? result : nullptr;
}

const UnwindRow *rowAt(const UnwindTable &table, uint64_t address) {
  const UnwindRow *found = nullptr;
  for (const UnwindRow &row : table) {
    if (row.hasAddress() && row.getAddress() > address) break;
    found = &row;
  }
  return found;
}

} // namespace stackwalk
