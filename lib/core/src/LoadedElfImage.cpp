// An ELF image rebuilt from a process's memory, for full dumps (createdump
// --full, a core of every mapping) whose module files are missing, as
// LoadedPeImage.cpp does for PE images. The loader mapped each PT_LOAD
// segment's file bytes at its virtual address; the rebuilt file puts them back
// at their file offsets. Section headers are never loaded, so the file gets
// sections of its own, made from what the program headers and the dynamic
// section locate: one per PT_LOAD segment (what the symbols point into),
// .dynsym and .dynstr, .eh_frame_hdr (PT_GNU_EH_FRAME) and the .eh_frame it
// points at (without PT_GNU_EH_FRAME, an .eh_frame found by searching the
// read-only segments: EhFrameSearch.h), .ARM.exidx (PT_ARM_EXIDX); the
// build-id note is found through PT_NOTE as in any file. Relocations the
// loader applied stay applied; they touch only writable segments, not code,
// unwind tables or symbols. ELF32 and ELF64 images, as LoadedElf: the file is
// written in the image's own class.
#include "EhFrameSearch.h"

#include "stackwalk/core/LoadedElf.h"
#include "stackwalk/core/ModuleImage.h"

#include "stackwalk/core/Fail.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFDataExtractor.h"
#include "llvm/Object/ELFTypes.h"

#include <algorithm>
#include <cstring>

using namespace llvm;

namespace stackwalk {

namespace {

constexpr uint64_t MaxImageBytes = uint64_t(256) << 20;
// Between two segments' bytes a file holds at most their alignment's padding.
constexpr uint64_t MaxPaddingPerSegment = 0x10000;

struct SectionHeader {
  std::string name;
  ELF::Elf64_Shdr header{};
};

template <class ELFT> class ElfRebuild {
public:
  explicit ElfRebuild(const LoadedElf &elf) : elf_(elf) {
    for (const ELF::Elf64_Phdr &ph : elf.programHeaders())
      if (ph.p_type == ELF::PT_LOAD) loads_.push_back(ph);
  }

  Error copySegments(const MemorySource &memory, uint64_t maxBytes);
  void addSections();
  // Whether the sections made locate anything the dump's memory does not
  // already give: dynamic symbols or unwind tables.
  bool locatesSymbolsOrUnwindTables() const { return sections_.size() > loads_.size() + 1; }
  std::vector<uint8_t> finish();

private:
  uint64_t runtime(uint64_t vaddr) const { return vaddr + elf_.bias(); }
  // Where [vaddr, vaddr + size) lies in the file: inside one segment's file bytes.
  std::optional<uint64_t> fileOffset(uint64_t vaddr, uint64_t size) const;
  std::optional<unsigned> segmentSection(uint64_t vaddr) const;
  unsigned add(std::string name, uint32_t type, uint64_t flags, uint64_t vaddr, uint64_t offset, uint64_t size);
  void addDynamicSymbols();
  void addUnwindTables();
  void addUnwindTablesFoundBySearch();
  // The architecture LLVM's CFI parser is told: it decodes a few operations by it.
  Triple::ArchType arch() const;
  void addArmExceptionIndex();
  typename ELFT::Shdr fileSectionHeader(const ELF::Elf64_Shdr &header) const;

  const LoadedElf &elf_;
  std::vector<ELF::Elf64_Phdr> loads_;
  std::vector<uint8_t> bytes_;
  std::vector<SectionHeader> sections_ = {SectionHeader{}};
};

template <class ELFT> Error ElfRebuild<ELFT>::copySegments(const MemorySource &memory, uint64_t maxBytes) {
  if (loads_.empty()) return fail("it has no PT_LOAD segment");
  const ELF::Elf64_Ehdr &header = elf_.header();
  if (header.e_phoff < sizeof(typename ELFT::Ehdr) || header.e_phoff > MaxImageBytes)
    return fail("its program headers are not where a file keeps them");
  uint64_t fileSize = header.e_phoff + elf_.programHeaderBytes().size(), loaded = fileSize;
  for (const ELF::Elf64_Phdr &ph : loads_) {
    if (ph.p_offset > MaxImageBytes || ph.p_filesz > MaxImageBytes || ph.p_filesz > ph.p_memsz)
      return fail("a PT_LOAD segment claims an implausible size");
    fileSize = std::max(fileSize, ph.p_offset + ph.p_filesz);
    loaded += ph.p_filesz;
  }
  if (fileSize > std::min(MaxImageBytes, maxBytes))
    return fail("an ELF image of " + std::to_string(fileSize >> 20) + " MiB in the dump's memory: over the limit");
  if (fileSize > loaded + (loads_.size() + 1) * MaxPaddingPerSegment)
    return fail("program headers whose file layout is far larger than the segments they map");
  // Every segment readable before anything is allocated.
  for (const ELF::Elf64_Phdr &ph : loads_)
    if (!memory.readableThroughout(runtime(ph.p_vaddr), ph.p_filesz))
      return fail("a segment of the image is not in the dump's memory");
  bytes_.assign(fileSize, 0);
  for (const ELF::Elf64_Phdr &ph : loads_)
    if (!memory.read(runtime(ph.p_vaddr), std::span(bytes_).subspan(ph.p_offset, ph.p_filesz)))
      return fail("a segment of the image is not in the dump's memory");
  std::copy(elf_.headerBytes().begin(), elf_.headerBytes().end(), bytes_.begin());
  std::copy(elf_.programHeaderBytes().begin(), elf_.programHeaderBytes().end(), bytes_.begin() + header.e_phoff);
  return Error::success();
}

template <class ELFT> std::optional<uint64_t> ElfRebuild<ELFT>::fileOffset(uint64_t vaddr, uint64_t size) const {
  for (const ELF::Elf64_Phdr &ph : loads_)
    if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr <= ph.p_filesz && size <= ph.p_filesz - (vaddr - ph.p_vaddr))
      return ph.p_offset + (vaddr - ph.p_vaddr);
  return std::nullopt;
}

// The section made for the segment that maps vaddr (sections 1..n are the PT_LOAD segments).
template <class ELFT> std::optional<unsigned> ElfRebuild<ELFT>::segmentSection(uint64_t vaddr) const {
  for (size_t i = 0; i < loads_.size(); ++i)
    if (vaddr >= loads_[i].p_vaddr && vaddr - loads_[i].p_vaddr < loads_[i].p_memsz) return unsigned(i + 1);
  return std::nullopt;
}

template <class ELFT>
unsigned ElfRebuild<ELFT>::add(std::string name, uint32_t type, uint64_t flags, uint64_t vaddr, uint64_t offset,
                               uint64_t size) {
  SectionHeader section{std::move(name), {}};
  section.header.sh_type = type;
  section.header.sh_flags = flags;
  section.header.sh_addr = vaddr;
  section.header.sh_offset = offset;
  section.header.sh_size = size;
  section.header.sh_addralign = 1;
  sections_.push_back(std::move(section));
  return unsigned(sections_.size() - 1);
}

template <class ELFT> void ElfRebuild<ELFT>::addSections() {
  // One section per segment, named after what such a segment holds: code,
  // writable data, or read-only data (headers, symbols, unwind tables).
  for (const ELF::Elf64_Phdr &ph : loads_) {
    bool code = ph.p_flags & ELF::PF_X, writable = ph.p_flags & ELF::PF_W;
    uint64_t flags = ELF::SHF_ALLOC | (code ? uint64_t(ELF::SHF_EXECINSTR) : 0) | (writable ? uint64_t(ELF::SHF_WRITE) : 0);
    add(code ? ".text" : writable ? ".data" : ".rodata", ELF::SHT_PROGBITS, flags, ph.p_vaddr, ph.p_offset,
        ph.p_filesz);
  }
  addDynamicSymbols();
  addUnwindTables();
  addArmExceptionIndex();
}

// .dynsym and .dynstr, each symbol's section index pointed at the segment
// section that holds its address (the file's own indices name sections that
// are not there).
template <class ELFT> void ElfRebuild<ELFT>::addDynamicSymbols() {
  using Sym = typename ELFT::Sym;
  std::optional<LoadedElf::DynamicSymbols> symbols = elf_.dynamicSymbols();
  if (!symbols || symbols->count > MaxImageBytes / sizeof(Sym)) return;
  uint64_t tableVaddr = symbols->table - elf_.bias(), stringsVaddr = symbols->strings - elf_.bias();
  uint64_t tableSize = symbols->count * sizeof(Sym);
  std::optional<uint64_t> table = fileOffset(tableVaddr, tableSize);
  std::optional<uint64_t> strings = fileOffset(stringsVaddr, symbols->stringsSize);
  if (!table || !strings) return;
  unsigned stringsIndex = add(".dynstr", ELF::SHT_STRTAB, ELF::SHF_ALLOC, stringsVaddr, *strings, symbols->stringsSize);
  unsigned tableIndex = add(".dynsym", ELF::SHT_DYNSYM, ELF::SHF_ALLOC, tableVaddr, *table, tableSize);
  sections_[tableIndex].header.sh_entsize = sizeof(Sym);
  sections_[tableIndex].header.sh_link = stringsIndex;
  sections_[tableIndex].header.sh_info = 1;
  for (uint64_t i = 1; i < symbols->count; ++i) {
    // Copied out and back: a dump's table need not be aligned.
    uint8_t *at = bytes_.data() + *table + i * sizeof(Sym);
    Sym symbol;
    std::memcpy(&symbol, at, sizeof symbol);
    if (symbol.st_shndx == ELF::SHN_UNDEF || symbol.st_shndx >= ELF::SHN_LORESERVE) continue;
    symbol.st_shndx = segmentSection(symbol.st_value).value_or(ELF::SHN_ABS);
    std::memcpy(at, &symbol, sizeof symbol);
  }
}

// .eh_frame_hdr where PT_GNU_EH_FRAME says, and the .eh_frame its
// eh_frame_ptr names. That section's end is not recorded anywhere loaded: it
// runs to the end of its segment's bytes, which is safe because the
// header's sorted table, not a walk to the end, finds each FDE.
template <class ELFT> void ElfRebuild<ELFT>::addUnwindTables() {
  auto hdr = std::find_if(elf_.programHeaders().begin(), elf_.programHeaders().end(),
                          [](const ELF::Elf64_Phdr &ph) { return ph.p_type == ELF::PT_GNU_EH_FRAME; });
  if (hdr == elf_.programHeaders().end()) return addUnwindTablesFoundBySearch();
  std::optional<uint64_t> hdrOffset = fileOffset(hdr->p_vaddr, hdr->p_filesz);
  if (!hdrOffset || hdr->p_filesz < 8) return;
  add(".eh_frame_hdr", ELF::SHT_PROGBITS, ELF::SHF_ALLOC, hdr->p_vaddr, *hdrOffset, hdr->p_filesz);
  StringRef contents(reinterpret_cast<const char *>(bytes_.data()) + *hdrOffset, hdr->p_filesz);
  if (contents[0] != 1) return; // version
  DWARFDataExtractor data(contents, true, ELFT::Is64Bits ? 8 : 4);
  uint64_t at = 4;
  std::optional<uint64_t> ehFrame = data.getEncodedPointer(&at, uint8_t(contents[1]), hdr->p_vaddr + at);
  if (!ehFrame) return;
  for (const ELF::Elf64_Phdr &ph : loads_)
    if (*ehFrame >= ph.p_vaddr && *ehFrame - ph.p_vaddr < ph.p_filesz)
      add(".eh_frame", ELF::SHT_PROGBITS, ELF::SHF_ALLOC, *ehFrame, ph.p_offset + (*ehFrame - ph.p_vaddr),
          ph.p_filesz - (*ehFrame - ph.p_vaddr));
}

template <class ELFT> Triple::ArchType ElfRebuild<ELFT>::arch() const {
  switch (elf_.header().e_machine) {
  case ELF::EM_X86_64: return Triple::x86_64;
  case ELF::EM_386: return Triple::x86;
  case ELF::EM_AARCH64: return Triple::aarch64;
  case ELF::EM_ARM: return Triple::arm;
  default: return Triple::UnknownArch;
  }
}

// The .eh_frame that no program header locates, found in the first read-only
// segment whose bytes hold one (a linker writes a single .eh_frame).
template <class ELFT> void ElfRebuild<ELFT>::addUnwindTablesFoundBySearch() {
  std::vector<CodeRange> code;
  for (const ELF::Elf64_Phdr &ph : loads_)
    if (ph.p_flags & ELF::PF_X) code.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz});
  for (const ELF::Elf64_Phdr &ph : loads_) {
    if (ph.p_flags & ELF::PF_W) continue;
    auto segment = ArrayRef<uint8_t>(bytes_).slice(ph.p_offset, ph.p_filesz);
    if (std::optional<EhFrameBounds> found = findEhFrame(segment, ph.p_vaddr, ELFT::Is64Bits ? 8 : 4, arch(), code))
      return void(add(".eh_frame", ELF::SHT_PROGBITS, ELF::SHF_ALLOC, ph.p_vaddr + found->offset,
                      ph.p_offset + found->offset, found->size));
  }
}

// .ARM.exidx where PT_ARM_EXIDX says: 32-bit ARM code's unwind table.
template <class ELFT> void ElfRebuild<ELFT>::addArmExceptionIndex() {
  for (const ELF::Elf64_Phdr &ph : elf_.programHeaders())
    if (ph.p_type == ELF::PT_ARM_EXIDX)
      if (std::optional<uint64_t> offset = fileOffset(ph.p_vaddr, ph.p_filesz))
        add(".ARM.exidx", ELF::SHT_ARM_EXIDX, ELF::SHF_ALLOC, ph.p_vaddr, *offset, ph.p_filesz);
}

// A section header in the file's class.
template <class ELFT>
typename ELFT::Shdr ElfRebuild<ELFT>::fileSectionHeader(const ELF::Elf64_Shdr &header) const {
  typename ELFT::Shdr out{};
  out.sh_name = header.sh_name, out.sh_type = header.sh_type, out.sh_flags = header.sh_flags;
  out.sh_addr = header.sh_addr, out.sh_offset = header.sh_offset, out.sh_size = header.sh_size;
  out.sh_link = header.sh_link, out.sh_info = header.sh_info, out.sh_addralign = header.sh_addralign;
  out.sh_entsize = header.sh_entsize;
  return out;
}

// The section names and headers after the copied bytes, and the ELF header
// pointed at them.
template <class ELFT> std::vector<uint8_t> ElfRebuild<ELFT>::finish() {
  unsigned namesIndex = add(".shstrtab", ELF::SHT_STRTAB, 0, 0, 0, 0);
  std::string names(1, '\0');
  for (SectionHeader &section : sections_) {
    if (section.name.empty()) continue;
    section.header.sh_name = uint32_t(names.size());
    names += section.name + '\0';
  }
  sections_[namesIndex].header.sh_offset = bytes_.size();
  sections_[namesIndex].header.sh_size = names.size();
  bytes_.insert(bytes_.end(), names.begin(), names.end());
  bytes_.resize((bytes_.size() + 7) & ~size_t(7));
  typename ELFT::Ehdr header;
  std::memcpy(&header, bytes_.data(), sizeof header);
  header.e_shoff = bytes_.size();
  header.e_shentsize = sizeof(typename ELFT::Shdr);
  header.e_shnum = uint16_t(sections_.size());
  header.e_shstrndx = uint16_t(namesIndex);
  std::memcpy(bytes_.data(), &header, sizeof header);
  for (const SectionHeader &section : sections_) {
    typename ELFT::Shdr written = fileSectionHeader(section.header);
    auto raw = reinterpret_cast<const uint8_t *>(&written);
    bytes_.insert(bytes_.end(), raw, raw + sizeof written);
  }
  return std::move(bytes_);
}

template <class ELFT>
Expected<std::vector<uint8_t>> rebuild(const MemorySource &memory, const LoadedElf &elf, uint64_t maxBytes) {
  ElfRebuild<ELFT> rebuild(elf);
  if (Error err = rebuild.copySegments(memory, maxBytes)) return err;
  rebuild.addSections();
  if (!rebuild.locatesSymbolsOrUnwindTables())
    return fail("it has neither a dynamic section (PT_DYNAMIC) nor an unwind table (PT_GNU_EH_FRAME, or an .eh_frame "
                "found in its read-only segments)");
  return rebuild.finish();
}

} // namespace

Expected<std::unique_ptr<ModuleImage>> ModuleImage::fromLoadedElf(const MemorySource &memory, uint64_t base,
                                                                  const std::string &name, uint64_t maxBytes) {
  Expected<LoadedElf> elf = LoadedElf::read(memory, base);
  if (!elf) return elf.takeError();
  auto rebuilt = elf->is64() ? rebuild<object::ELF64LE>(memory, *elf, maxBytes)
                             : rebuild<object::ELF32LE>(memory, *elf, maxBytes);
  if (!rebuilt) return rebuilt.takeError();
  return fromBytes(std::move(*rebuilt), name);
}

} // namespace stackwalk
