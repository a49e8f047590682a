#include "GnuHashTable.h"

using namespace llvm;
using namespace llvm::object;

namespace stackwalk {

std::optional<GnuHashTable> GnuHashTable::forSymbols(const ELFFile<ELFT> &file, ArrayRef<ELFT::Shdr> sections,
                                                     const ELFT::Shdr &dynsym, size_t symbolCount) {
  uint64_t dynsymIndex = &dynsym - sections.data();
  for (const ELFT::Shdr &section : sections) {
    if (section.sh_type != ELF::SHT_GNU_HASH || section.sh_link != dynsymIndex) continue;
    Expected<ArrayRef<uint8_t>> bytes = file.getSectionContents(section);
    if (!bytes) {
      consumeError(bytes.takeError());
      return std::nullopt;
    }
    // Header (four words), Bloom filter (maskwords 64-bit words), buckets
    // (nbuckets words), then a hash value for each symbol from symndx on.
    if (bytes->size() < sizeof(ELFT::GnuHash)) return std::nullopt;
    const auto &table = *reinterpret_cast<const ELFT::GnuHash *>(bytes->data());
    uint64_t hashed = table.symndx <= symbolCount ? symbolCount - table.symndx : 0;
    uint64_t needed = sizeof(ELFT::GnuHash) + uint64_t(table.maskwords) * sizeof(ELFT::Off) +
                      (uint64_t(table.nbuckets) + hashed) * sizeof(ELFT::Word);
    if (table.nbuckets == 0 || table.symndx > symbolCount || needed > bytes->size()) return std::nullopt;
    return GnuHashTable(table, symbolCount);
  }
  return std::nullopt;
}

// The Bloom filter's two bits for the hash (all set when it may be there).
bool GnuHashTable::mayHold(uint32_t hash) const {
  ArrayRef<ELFT::Off> filter = table_->filter();
  if (filter.empty()) return true;
  constexpr uint32_t Bits = 64;
  uint64_t word = filter[(hash / Bits) % filter.size()];
  // The file gives the shift: one of 32 or more shifts every bit out.
  uint32_t shifted = table_->shift2 < 32 ? hash >> table_->shift2 : 0;
  uint64_t mask = (uint64_t(1) << (hash % Bits)) | (uint64_t(1) << (shifted % Bits));
  return (word & mask) == mask;
}

std::optional<uint32_t> GnuHashTable::find(StringRef name, function_ref<bool(uint32_t)> accept) const {
  uint32_t hash = hashGnu(name);
  if (!mayHold(hash)) return std::nullopt;
  uint32_t first = table_->buckets()[hash % table_->nbuckets];
  if (first < table_->symndx || first >= symbolCount_) return std::nullopt; // 0: an empty bucket
  ArrayRef<ELFT::Word> values = table_->values(symbolCount_);
  // A chain's values are the hashes with the lowest bit replaced: set on its last.
  for (uint32_t index = first; index < symbolCount_; ++index) {
    uint32_t value = values[index - table_->symndx];
    if ((value | 1) == (hash | 1) && accept(index)) return index;
    if (value & 1) break;
  }
  return std::nullopt;
}

} // namespace stackwalk
