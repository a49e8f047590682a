#include "stackwalk/core/LoadedElf.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <array>
#include <cstring>

using namespace llvm;

namespace stackwalk {
namespace {

constexpr unsigned MaxProgramHeaders = 256, MaxDynamicEntries = 4096;
constexpr uint64_t MaxChain = 1 << 20; // hash chain entries followed at most
constexpr size_t SymbolSize = 24;      // Elf64_Sym

} // namespace

Expected<LoadedElf> LoadedElf::read(const MemorySource &memory, uint64_t base) {
  ELF::Elf64_Ehdr header;
  if (!memory.read(base, {reinterpret_cast<uint8_t *>(&header), sizeof header}))
    return fail("its ELF header at " + hex(base) + " is not in the dump");
  if (std::memcmp(header.e_ident, ELF::ElfMagic, 4) != 0 || header.e_ident[ELF::EI_CLASS] != ELF::ELFCLASS64 ||
      header.e_ident[ELF::EI_DATA] != ELF::ELFDATA2LSB)
    return fail("the bytes at " + hex(base) + " are not a 64-bit little-endian ELF header");
  if (header.e_phentsize != sizeof(ELF::Elf64_Phdr) || header.e_phnum > MaxProgramHeaders)
    return fail("its program header table is implausible");
  LoadedElf elf(memory, base);
  elf.header_ = header;
  std::optional<ELF::Elf64_Phdr> dynamic;
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    auto ph = memory.readValue<ELF::Elf64_Phdr>(base + header.e_phoff + i * sizeof(ELF::Elf64_Phdr));
    if (!ph) return fail("its program headers are not in the dump");
    elf.programHeaders_.push_back(*ph);
    if (ph->p_type == ELF::PT_LOAD) {
      lowest = std::min(lowest, ph->p_vaddr & ~uint64_t(0xfff));
      highest = std::max(highest, ph->p_vaddr + ph->p_memsz);
    }
    if (ph->p_type == ELF::PT_DYNAMIC) dynamic = *ph;
  }
  if (lowest == UINT64_MAX) return fail("it has no PT_LOAD segment");
  if (!dynamic) return fail("it has no dynamic section (PT_DYNAMIC)");
  elf.bias_ = base - lowest;
  elf.extent_ = highest - lowest;
  if (Error err = elf.readDynamic(elf.bias_ + dynamic->p_vaddr, dynamic->p_memsz)) return err;
  return elf;
}

Error LoadedElf::readDynamic(uint64_t address, uint64_t size) {
  for (uint64_t n = 0; n < size / 16 && n < MaxDynamicEntries; ++n) {
    auto tag = memory_->readValue<int64_t>(address + n * 16);
    auto value = memory_->readValue<uint64_t>(address + n * 16 + 8);
    if (!tag || !value) return fail("its dynamic section at " + hex(address) + " is not in the dump");
    if (*tag == ELF::DT_NULL) break;
    dynamic_.emplace(*tag, *value);
  }
  return Error::success();
}

std::optional<uint64_t> LoadedElf::dynamicAddress(int64_t tag) const {
  auto found = dynamic_.find(tag);
  if (found == dynamic_.end()) return std::nullopt;
  uint64_t value = found->second;
  return value >= base_ && value - base_ < extent_ ? value : value + bias_;
}

std::optional<uint64_t> LoadedElf::matchSymbol(uint64_t symtab, uint64_t strtab, uint64_t index,
                                              StringRef name) const {
  auto sym = memory_->readValue<ELF::Elf64_Sym>(symtab + index * SymbolSize);
  if (!sym || sym->st_shndx == ELF::SHN_UNDEF) return std::nullopt;
  std::vector<uint8_t> text(name.size() + 1);
  if (!memory_->read(strtab + sym->st_name, text)) return std::nullopt;
  if (std::memcmp(text.data(), name.data(), name.size()) != 0 || text.back() != 0) return std::nullopt;
  return sym->st_value + bias_;
}

// The GNU hash table: nbuckets, symoffset, bloom size, bloom shift, the bloom
// words, the buckets, then one chain word per symbol from symoffset on, whose
// low bit ends a chain.
std::optional<uint64_t> LoadedElf::gnuHashLookup(uint64_t table, uint64_t symtab, uint64_t strtab,
                                                StringRef name) const {
  auto header = memory_->readValue<std::array<uint32_t, 4>>(table);
  if (!header || (*header)[0] == 0) return std::nullopt;
  auto [buckets, symoffset, bloomSize, bloomShift] = *header;
  uint32_t hash = 5381;
  for (unsigned char c : name) hash = hash * 33 + c;
  uint64_t bucketsAt = table + 16 + uint64_t(bloomSize) * 8;
  auto first = memory_->readValue<uint32_t>(bucketsAt + uint64_t(hash % buckets) * 4);
  if (!first || *first < symoffset) return std::nullopt;
  uint64_t chainAt = bucketsAt + uint64_t(buckets) * 4;
  for (uint64_t index = *first; index - *first < MaxChain; ++index) {
    auto chain = memory_->readValue<uint32_t>(chainAt + (index - symoffset) * 4);
    if (!chain) return std::nullopt;
    if ((*chain | 1) == (hash | 1))
      if (auto address = matchSymbol(symtab, strtab, index, name)) return address;
    if (*chain & 1) return std::nullopt;
  }
  return std::nullopt;
}

// The System V hash table: nbucket, nchain, the buckets, the chains.
std::optional<uint64_t> LoadedElf::sysvHashLookup(uint64_t table, uint64_t symtab, uint64_t strtab,
                                                 StringRef name) const {
  auto header = memory_->readValue<std::array<uint32_t, 2>>(table);
  if (!header || (*header)[0] == 0) return std::nullopt;
  auto [buckets, chains] = *header;
  uint32_t hash = 0;
  for (unsigned char c : name) {
    hash = (hash << 4) + c;
    hash = (hash ^ ((hash & 0xf0000000) >> 24)) & 0x0fffffff;
  }
  auto index = memory_->readValue<uint32_t>(table + 8 + uint64_t(hash % buckets) * 4);
  for (uint64_t steps = 0; index && *index != 0 && *index < chains && steps < MaxChain; ++steps) {
    if (auto address = matchSymbol(symtab, strtab, *index, name)) return address;
    index = memory_->readValue<uint32_t>(table + 8 + uint64_t(buckets) * 4 + uint64_t(*index) * 4);
  }
  return std::nullopt;
}

Expected<uint64_t> LoadedElf::symbolAddress(StringRef name) const {
  std::optional<uint64_t> symtab = dynamicAddress(ELF::DT_SYMTAB), strtab = dynamicAddress(ELF::DT_STRTAB);
  if (!symtab || !strtab) return fail("its dynamic section names no symbol or string table");
  std::optional<uint64_t> found;
  if (auto gnu = dynamicAddress(ELF::DT_GNU_HASH)) found = gnuHashLookup(*gnu, *symtab, *strtab, name);
  else if (auto sysv = dynamicAddress(ELF::DT_HASH)) found = sysvHashLookup(*sysv, *symtab, *strtab, name);
  else return fail("its dynamic section has no hash table (DT_GNU_HASH or DT_HASH)");
  if (!found) return fail("its dynamic symbols in the dump do not define " + name);
  return *found;
}

// DT_HASH's nchain is the count; DT_GNU_HASH's is one past the last chain
// entry of the highest bucket's chain.
std::optional<uint64_t> LoadedElf::symbolCount() const {
  if (auto sysv = dynamicAddress(ELF::DT_HASH))
    if (auto header = memory_->readValue<std::array<uint32_t, 2>>(*sysv)) return (*header)[1];
  auto gnu = dynamicAddress(ELF::DT_GNU_HASH);
  if (!gnu) return std::nullopt;
  auto header = memory_->readValue<std::array<uint32_t, 4>>(*gnu);
  if (!header || (*header)[0] == 0 || (*header)[0] > MaxChain) return std::nullopt;
  auto [buckets, symoffset, bloomSize, bloomShift] = *header;
  uint64_t bucketsAt = *gnu + 16 + uint64_t(bloomSize) * 8, chainAt = bucketsAt + uint64_t(buckets) * 4;
  uint32_t last = 0;
  for (uint32_t i = 0; i < buckets; ++i)
    if (auto first = memory_->readValue<uint32_t>(bucketsAt + uint64_t(i) * 4)) last = std::max(last, *first);
  if (last < symoffset) return symoffset;
  for (uint64_t index = last; index - last < MaxChain; ++index) {
    auto chain = memory_->readValue<uint32_t>(chainAt + (index - symoffset) * 4);
    if (!chain || (*chain & 1)) return index + 1;
  }
  return std::nullopt;
}

std::optional<LoadedElf::DynamicSymbols> LoadedElf::dynamicSymbols() const {
  std::optional<uint64_t> table = dynamicAddress(ELF::DT_SYMTAB), strings = dynamicAddress(ELF::DT_STRTAB);
  std::optional<uint64_t> count = symbolCount();
  auto stringsSize = dynamic_.find(ELF::DT_STRSZ);
  if (!table || !strings || !count || stringsSize == dynamic_.end()) return std::nullopt;
  return DynamicSymbols{*table, *count, *strings, stringsSize->second};
}

// A symbol's name: up to 255 bytes before its NUL, read in one piece where
// the dump holds them; empty when it is longer or cannot be read.
std::string LoadedElf::symbolName(uint64_t address) const {
  std::array<uint8_t, 256> text{};
  size_t readable = text.size();
  while (readable > 0 && !memory_->read(address, std::span(text.data(), readable))) readable /= 2;
  auto end = std::find(text.begin(), text.begin() + readable, 0);
  if (end == text.begin() + readable) return "";
  return std::string(text.begin(), end);
}

std::vector<LoadedElf::Function> LoadedElf::functions(uint64_t &budget) const {
  std::optional<uint64_t> symtab = dynamicAddress(ELF::DT_SYMTAB), strtab = dynamicAddress(ELF::DT_STRTAB);
  std::optional<uint64_t> count = symbolCount();
  std::vector<Function> out;
  if (!symtab || !strtab || !count) return out;
  for (uint64_t index = 1; index < *count && budget > 0; ++index, --budget) {
    auto sym = memory_->readValue<ELF::Elf64_Sym>(*symtab + index * SymbolSize);
    if (!sym) break;
    if (sym->st_shndx == ELF::SHN_UNDEF || sym->getType() != ELF::STT_FUNC || sym->st_size == 0) continue;
    std::string name = symbolName(*strtab + sym->st_name);
    if (!name.empty()) out.push_back(Function{sym->st_value + bias_, sym->st_size, std::move(name)});
  }
  std::sort(out.begin(), out.end(), [](const Function &a, const Function &b) { return a.start < b.start; });
  return out;
}

} // namespace stackwalk
