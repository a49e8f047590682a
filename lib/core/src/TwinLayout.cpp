#include "TwinLayout.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/MathExtras.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;

namespace stackwalk {
namespace {

// The .debug_* sections of a file of class ELFT, each with the size it takes decompressed.
template <class ELFT>
Error listSections(const object::ELFObjectFile<ELFT> &elf, TwinSections which, std::vector<TwinSection> &out) {
  for (const object::SectionRef &section : elf.sections()) {
    Expected<StringRef> name = section.getName();
    if (!name) return name.takeError();
    if (!name->starts_with(".debug_") && *name != ".gdb_index") continue;
    if (which == TwinSections::WithoutLocationLists && (*name == ".debug_loc" || *name == ".debug_loclists")) continue;
    Expected<StringRef> contents = section.getContents();
    if (!contents) return contents.takeError();
    auto header = elf.getELFFile().getSection(section.getIndex());
    if (!header) return header.takeError();
    TwinSection twin{*name, *contents, 0, (*header)->sh_flags & ~uint64_t(ELF::SHF_COMPRESSED), (*header)->sh_entsize,
                     contents->size(), 0, bool((*header)->sh_flags & ELF::SHF_COMPRESSED)};
    if (twin.compressed) {
      using Chdr = typename ELFT::Chdr;
      if (contents->size() < sizeof(Chdr)) return fail("a compressed section has no header");
      const auto *chdr = reinterpret_cast<const Chdr *>(contents->data());
      twin.compression = chdr->ch_type;
      twin.size = chdr->ch_size; // a compressed section can claim any size: checked against the limit
      twin.stream = contents->drop_front(sizeof(Chdr));
    }
    out.push_back(twin);
  }
  return Error::success();
}

// Inflates a zlib stream into `out`, which has the size its header gives.
Error inflateZlib(StringRef stream, MutableArrayRef<uint8_t> out) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decompressor(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor) return fail("out of memory for a decompressor");
  size_t size = 0;
  if (libdeflate_zlib_decompress(decompressor.get(), stream.data(), stream.size(), out.data(), out.size(), &size) !=
          LIBDEFLATE_SUCCESS ||
      size != out.size())
    return fail("a zlib section does not inflate to the size its header says");
  return Error::success();
}

} // namespace

Expected<TwinLayout> TwinLayout::of(const ModuleImage &file, uint64_t maxDebugBytes, TwinSections which) {
  TwinLayout layout;
  const object::ObjectFile &object = file.object();
  const auto *elf64 = dyn_cast<object::ELF64LEObjectFile>(&object);
  const auto *elf32 = dyn_cast<object::ELF32LEObjectFile>(&object);
  auto keepHeader = [&](const auto &header) {
    std::memcpy(layout.ident_, header.e_ident, ELF::EI_NIDENT);
    layout.type_ = header.e_type;
    layout.machine_ = header.e_machine;
  };
  if (elf64) keepHeader(elf64->getELFFile().getHeader());
  else if (elf32) keepHeader(elf32->getELFFile().getHeader());
  else return fail("not a little-endian ELF file");
  layout.is64_ = elf64 != nullptr;
  if (layout.type_ != ELF::ET_EXEC && layout.type_ != ELF::ET_DYN) return fail("not a linked file");
  if (!hasCompressedSection(file)) return fail("no compressed section");
  if (Error err = elf64 ? listSections(*elf64, which, layout.sections_) : listSections(*elf32, which, layout.sections_))
    return err;
  if (layout.sections_.size() + 2 >= ELF::SHN_LORESERVE) return fail("too many debug sections");

  layout.names_.assign(1, '\0');
  uint64_t headerSize = layout.is64_ ? sizeof(ELF::Elf64_Ehdr) : sizeof(ELF::Elf32_Ehdr);
  uint64_t offset = headerSize, claimed = 0;
  for (const TwinSection &section : layout.sections_) {
    if (section.size > maxDebugBytes - claimed) return fail("the sections claim too much to decompress");
    claimed += section.size;
    layout.names_.append(section.name.data(), section.name.size()).push_back('\0');
  }
  // .debug_info's bytes last: the twin's memory ends in small pages past its
  // last 2 MiB boundary (TwinBuffer), and a walk seldom reads the last units
  // (park-normal's frames end at 72% of libc's), so those pages are seldom
  // touched, where the other sections, filled whole, touched each of them.
  for (bool info : {false, true})
    for (TwinSection &section : layout.sections_)
      if ((section.name == ".debug_info") == info) {
        section.offset = offset;
        offset += section.size;
      }
  layout.names_.append(".shstrtab").push_back('\0');
  layout.contentsEnd_ = offset;
  layout.tableOffset_ = alignTo(offset + layout.names_.size(), 8);
  return layout;
}

uint64_t TwinLayout::tableBytes() const {
  return (sections_.size() + 2) * (is64_ ? sizeof(ELF::Elf64_Shdr) : sizeof(ELF::Elf32_Shdr));
}

template <class ELFT>
void TwinLayout::writeHeaderAndTableAs(MutableArrayRef<uint8_t> out, uint64_t namesOffset, uint64_t sectionBase,
                                       size_t cut, uint64_t cutSize) const {
  using Ehdr = typename ELFT::Ehdr;
  using Shdr = typename ELFT::Shdr;
  const std::vector<TwinSection> &sections = sections_;
  std::vector<Shdr> table(sections.size() + 2);
  std::memset(table.data(), 0, table.size() * sizeof(Shdr));
  uint64_t nameOffset = 1;
  for (size_t i = 0; i < sections.size(); ++i) {
    const TwinSection &section = sections[i];
    Shdr &entry = table[1 + i];
    entry.sh_name = uint32_t(nameOffset);
    entry.sh_type = ELF::SHT_PROGBITS;
    entry.sh_flags = section.flags;
    entry.sh_offset = sectionBase + section.offset;
    entry.sh_size = i == cut ? cutSize : section.size;
    entry.sh_addralign = 1;
    entry.sh_entsize = section.entrySize;
    nameOffset += section.name.size() + 1;
  }
  Shdr &nameTable = table.back();
  nameTable.sh_name = uint32_t(nameOffset);
  nameTable.sh_type = ELF::SHT_STRTAB;
  nameTable.sh_offset = namesOffset;
  nameTable.sh_size = names_.size();
  nameTable.sh_addralign = 1;
  uint64_t tableOffset = alignTo(namesOffset + names_.size(), 8);
  std::memcpy(out.data() + namesOffset, names_.data(), names_.size());
  std::memset(out.data() + namesOffset + names_.size(), 0, tableOffset - namesOffset - names_.size()); // alignment
  std::memcpy(out.data() + tableOffset, table.data(), table.size() * sizeof(Shdr));

  Ehdr header;
  std::memset(&header, 0, sizeof header);
  std::memcpy(header.e_ident, ident_, ELF::EI_NIDENT);
  header.e_type = type_;
  header.e_machine = machine_;
  header.e_version = ELF::EV_CURRENT;
  header.e_shoff = tableOffset;
  header.e_ehsize = sizeof(Ehdr);
  header.e_shentsize = sizeof(Shdr);
  header.e_shnum = uint16_t(table.size());
  header.e_shstrndx = uint16_t(table.size() - 1);
  std::memcpy(out.data(), &header, sizeof header);
}

void TwinLayout::writeHeaderAndTable(MutableArrayRef<uint8_t> out, uint64_t namesOffset, uint64_t sectionBase,
                                     size_t cut, uint64_t cutSize) const {
  if (is64_) writeHeaderAndTableAs<object::ELF64LE>(out, namesOffset, sectionBase, cut, cutSize);
  else writeHeaderAndTableAs<object::ELF32LE>(out, namesOffset, sectionBase, cut, cutSize);
}

void TwinLayout::writeTables(MutableArrayRef<uint8_t> twin) const {
  writeHeaderAndTable(twin, contentsEnd_, 0, sections_.size(), 0);
}

uint64_t TwinLayout::viewTablesSize() const {
  uint64_t headerSize = is64_ ? sizeof(ELF::Elf64_Ehdr) : sizeof(ELF::Elf32_Ehdr);
  return alignTo(headerSize + names_.size(), 8) + tableBytes();
}

void TwinLayout::writeViewTables(MutableArrayRef<uint8_t> lead, size_t cut, uint64_t cutSize) const {
  uint64_t headerSize = is64_ ? sizeof(ELF::Elf64_Ehdr) : sizeof(ELF::Elf32_Ehdr);
  writeHeaderAndTable(lead, headerSize, lead.size(), cut, cutSize);
}

Error fillSection(const ModuleImage &file, const TwinSection &section, MutableArrayRef<uint8_t> twin) {
  MutableArrayRef<uint8_t> out = twin.slice(section.offset, section.size);
  if (!section.compressed) {
    std::memcpy(out.data(), section.stream.data(), section.size);
    return Error::success();
  }
  Error filled = Error::success();
  if (section.compression == ELF::ELFCOMPRESS_ZLIB) {
    filled = inflateZlib(section.stream, out);
  } else if (section.compression == ELF::ELFCOMPRESS_ZSTD) {
    size_t size = out.size();
    filled = compression::zstd::decompress(arrayRefFromStringRef(section.stream), out.data(), size);
    if (!filled && size != out.size()) filled = fail("a zstd section is shorter than its header says");
  } else {
    filled = fail("a section compressed in an unknown way");
  }
  file.releaseFilePages(section.stream);
  return filled;
}

std::unique_ptr<TwinBuffer> TwinBuffer::make(size_t size, size_t lead, const std::string &name) {
  constexpr size_t HugePage = 2 << 20;
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t mapped = alignTo(std::max<size_t>(size, 1), page);
  lead = alignTo(lead, page);
  if (mapped < size || lead > HugePage || mapped + HugePage + lead < mapped) return nullptr;
  // A huge page more than needed, to find the boundary in; the rest is unmapped again.
  void *reserved = mmap(nullptr, mapped + HugePage + lead, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (reserved == MAP_FAILED) return nullptr;
  auto *base = static_cast<char *>(reserved);
  char *start = reinterpret_cast<char *>(alignTo(uintptr_t(base + lead), HugePage));
  if (start - lead != base) munmap(base, start - lead - base);
  if (size_t after = base + mapped + HugePage + lead - (start + mapped)) munmap(start + mapped, after);
  madvise(start, mapped, MADV_HUGEPAGE);
  return std::unique_ptr<TwinBuffer>(new TwinBuffer(start, size, lead, mapped, name));
}

TwinBuffer::TwinBuffer(char *start, size_t size, size_t lead, size_t mapped, std::string name)
    : lead_(lead), mapped_(mapped), name_(std::move(name)) {
  init(start, start + size, /*RequiresNullTerminator=*/false);
}

TwinBuffer::~TwinBuffer() { munmap(const_cast<char *>(getBufferStart()) - lead_, lead_ + mapped_); }

} // namespace stackwalk
