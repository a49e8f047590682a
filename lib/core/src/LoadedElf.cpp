#include "stackwalk/core/LoadedElf.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"

#include <algorithm>
#include <array>
#include <cstring>

using namespace llvm;

namespace stackwalk {
namespace {

constexpr unsigned MaxProgramHeaders = 256, MaxDynamicEntries = 4096;
constexpr uint64_t MaxChain = 1 << 20; // hash chain entries followed at most

// A 32-bit structure's fields in its 64-bit form (same names, wider types).
ELF::Elf64_Ehdr widened(const object::ELF32LE::Ehdr &h) {
  ELF::Elf64_Ehdr out{};
  std::memcpy(out.e_ident, h.e_ident, sizeof out.e_ident);
  out.e_type = h.e_type, out.e_machine = h.e_machine, out.e_version = h.e_version, out.e_entry = h.e_entry;
  out.e_phoff = h.e_phoff, out.e_shoff = h.e_shoff, out.e_flags = h.e_flags, out.e_ehsize = h.e_ehsize;
  out.e_phentsize = h.e_phentsize, out.e_phnum = h.e_phnum, out.e_shentsize = h.e_shentsize;
  out.e_shnum = h.e_shnum, out.e_shstrndx = h.e_shstrndx;
  return out;
}
ELF::Elf64_Phdr widened(const object::ELF32LE::Phdr &p) {
  return ELF::Elf64_Phdr{p.p_type, p.p_flags, p.p_offset, p.p_vaddr, p.p_paddr, p.p_filesz, p.p_memsz, p.p_align};
}
ELF::Elf64_Sym widened(const object::ELF32LE::Sym &s) {
  return ELF::Elf64_Sym{s.st_name, s.st_info, s.st_other, s.st_shndx, s.st_value, s.st_size};
}
// A 64-bit structure as LLVM's ELF64LE types read it, in the BinaryFormat form (the same bytes).
template <class To, class From> To sameBytes(const From &from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
ELF::Elf64_Ehdr widened(const object::ELF64LE::Ehdr &h) { return sameBytes<ELF::Elf64_Ehdr>(h); }
ELF::Elf64_Phdr widened(const object::ELF64LE::Phdr &p) { return sameBytes<ELF::Elf64_Phdr>(p); }

// T's bytes at `address`, as they are.
template <class T> std::optional<std::vector<uint8_t>> readBytes(const MemorySource &memory, uint64_t address,
                                                                 uint64_t count = 1) {
  std::vector<uint8_t> bytes(sizeof(T) * count);
  if (!memory.read(address, bytes)) return std::nullopt;
  return bytes;
}

template <class T> T at(const std::vector<uint8_t> &bytes, uint64_t index = 0) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

} // namespace

Expected<LoadedElf> LoadedElf::read(const MemorySource &memory, uint64_t base) {
  std::array<uint8_t, ELF::EI_NIDENT> ident;
  if (!memory.read(base, ident)) return fail("its ELF header at " + hex(base) + " is not in the dump");
  if (std::memcmp(ident.data(), ELF::ElfMagic, 4) != 0 || ident[ELF::EI_DATA] != ELF::ELFDATA2LSB)
    return fail("the bytes at " + hex(base) + " are not a little-endian ELF header");
  if (ident[ELF::EI_CLASS] == ELF::ELFCLASS64) return readAs<object::ELF64LE>(memory, base);
  if (ident[ELF::EI_CLASS] == ELF::ELFCLASS32) return readAs<object::ELF32LE>(memory, base);
  return fail("the ELF header at " + hex(base) + " is of no class stackwalk reads");
}

template <class ELFT> Expected<LoadedElf> LoadedElf::readAs(const MemorySource &memory, uint64_t base) {
  auto headerBytes = readBytes<typename ELFT::Ehdr>(memory, base);
  if (!headerBytes) return fail("its ELF header at " + hex(base) + " is not in the dump");
  auto header = at<typename ELFT::Ehdr>(*headerBytes);
  if (header.e_phentsize != sizeof(typename ELFT::Phdr) || header.e_phnum > MaxProgramHeaders)
    return fail("its program header table is implausible");
  if (header.e_phnum == 0) return fail("it has no PT_LOAD segment");
  auto tableBytes = readBytes<typename ELFT::Phdr>(memory, base + header.e_phoff, header.e_phnum);
  if (!tableBytes) return fail("its program headers are not in the dump");
  LoadedElf elf(memory, base, ELFT::Is64Bits);
  elf.header_ = widened(header);
  elf.headerBytes_ = std::move(*headerBytes);
  std::optional<ELF::Elf64_Phdr> dynamic;
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    ELF::Elf64_Phdr ph = widened(at<typename ELFT::Phdr>(*tableBytes, i));
    elf.programHeaders_.push_back(ph);
    if (ph.p_type == ELF::PT_LOAD) {
      lowest = std::min(lowest, ph.p_vaddr & ~uint64_t(0xfff));
      highest = std::max(highest, ph.p_vaddr + ph.p_memsz);
    }
    if (ph.p_type == ELF::PT_DYNAMIC) dynamic = ph;
  }
  elf.programHeaderBytes_ = std::move(*tableBytes);
  if (lowest == UINT64_MAX) return fail("it has no PT_LOAD segment");
  elf.bias_ = base - lowest;
  elf.extent_ = highest - lowest;
  // A statically linked executable that is not position-independent has no
  // dynamic section: no dynamic symbols, but its program headers still say
  // where its unwind tables are.
  if (!dynamic) return elf;
  elf.hasDynamicSection_ = true;
  if (Error err = elf.readDynamic<ELFT>(elf.bias_ + dynamic->p_vaddr, dynamic->p_memsz)) return err;
  return elf;
}

template <class ELFT> Error LoadedElf::readDynamic(uint64_t address, uint64_t size) {
  using Dyn = typename ELFT::Dyn;
  for (uint64_t n = 0; n < size / sizeof(Dyn) && n < MaxDynamicEntries; ++n) {
    auto entry = memory_->readValue<Dyn>(address + n * sizeof(Dyn));
    if (!entry) return fail("its dynamic section at " + hex(address) + " is not in the dump");
    if (entry->d_tag == ELF::DT_NULL) break;
    dynamic_.emplace(int64_t(entry->d_tag), uint64_t(entry->d_un.d_val));
  }
  return Error::success();
}

std::optional<ELF::Elf64_Sym> LoadedElf::symbolAt(uint64_t symtab, uint64_t index) const {
  if (!is64_) {
    auto sym = memory_->readValue<object::ELF32LE::Sym>(symtab + index * sizeof(object::ELF32LE::Sym));
    return sym ? std::optional(widened(*sym)) : std::nullopt;
  }
  return memory_->readValue<ELF::Elf64_Sym>(symtab + index * sizeof(ELF::Elf64_Sym));
}

std::optional<uint64_t> LoadedElf::dynamicAddress(int64_t tag) const {
  auto found = dynamic_.find(tag);
  if (found == dynamic_.end()) return std::nullopt;
  uint64_t value = found->second;
  return value >= base_ && value - base_ < extent_ ? value : value + bias_;
}

std::optional<uint64_t> LoadedElf::matchSymbol(uint64_t symtab, uint64_t strtab, uint64_t index,
                                              StringRef name) const {
  std::optional<ELF::Elf64_Sym> sym = symbolAt(symtab, index);
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
  uint64_t bucketsAt = table + 16 + uint64_t(bloomSize) * wordSize();
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
  if (!hasDynamicSection_) return fail("it has no dynamic section (PT_DYNAMIC)");
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
  uint64_t bucketsAt = *gnu + 16 + uint64_t(bloomSize) * wordSize(), chainAt = bucketsAt + uint64_t(buckets) * 4;
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
    std::optional<ELF::Elf64_Sym> sym = symbolAt(*symtab, index);
    if (!sym) break;
    if (sym->st_shndx == ELF::SHN_UNDEF || sym->getType() != ELF::STT_FUNC || sym->st_size == 0) continue;
    std::string name = symbolName(*strtab + sym->st_name);
    // An ARM function's bit 0 says it is Thumb code; it is no part of its address.
    uint64_t start = header_.e_machine == ELF::EM_ARM ? sym->st_value & ~uint64_t(1) : sym->st_value;
    if (!name.empty()) out.push_back(Function{start + bias_, sym->st_size, std::move(name)});
  }
  std::sort(out.begin(), out.end(), [](const Function &a, const Function &b) { return a.start < b.start; });
  return out;
}

} // namespace stackwalk
