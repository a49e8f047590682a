#include "stackwalk/core/DebugSectionTwin.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/MathExtras.h"

#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>
#include <sys/mman.h>
#include <system_error>
#include <unistd.h>

using namespace llvm;

namespace stackwalk {
namespace {

// A section of the twin: where its bytes come from, and their size there.
struct TwinSection {
  StringRef name, contents;
  uint64_t flags, entrySize, size;
  bool compressed;
};

// Inflates a compressed section (an Elf64_Chdr or Elf32_Chdr, then a zlib or
// zstd stream) into `out`, which has the size its header gives.
template <class ELFT> Error inflate(StringRef contents, MutableArrayRef<uint8_t> out) {
  const auto *chdr = reinterpret_cast<const typename ELFT::Chdr *>(contents.data());
  auto input = arrayRefFromStringRef(contents.drop_front(sizeof(typename ELFT::Chdr)));
  if (chdr->ch_type == ELF::ELFCOMPRESS_ZSTD) {
    size_t size = out.size();
    if (Error err = compression::zstd::decompress(input, out.data(), size)) return err;
    return size == out.size() ? Error::success() : fail("a zstd section is shorter than its header says");
  }
  if (chdr->ch_type != ELF::ELFCOMPRESS_ZLIB) return fail("a section compressed in an unknown way");
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decompressor(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor) return fail("out of memory for a decompressor");
  size_t size = 0;
  if (libdeflate_zlib_decompress(decompressor.get(), input.data(), input.size(), out.data(), out.size(), &size) !=
          LIBDEFLATE_SUCCESS ||
      size != out.size())
    return fail("a zlib section does not inflate to the size its header says");
  return Error::success();
}

// The .debug_* sections with the size each takes decompressed.
template <class ELFT>
Expected<std::vector<TwinSection>> twinSections(const object::ELFObjectFile<ELFT> &elf, TwinSections which) {
  std::vector<TwinSection> sections;
  for (const object::SectionRef &section : elf.sections()) {
    Expected<StringRef> name = section.getName();
    if (!name) return name.takeError();
    if (!name->starts_with(".debug_") && *name != ".gdb_index") continue;
    if (which == TwinSections::WithoutLocationLists && (*name == ".debug_loc" || *name == ".debug_loclists")) continue;
    Expected<StringRef> contents = section.getContents();
    if (!contents) return contents.takeError();
    auto header = elf.getELFFile().getSection(section.getIndex());
    if (!header) return header.takeError();
    bool compressed = (*header)->sh_flags & ELF::SHF_COMPRESSED;
    if (compressed && contents->size() < sizeof(typename ELFT::Chdr)) return fail("a compressed section has no header");
    uint64_t size =
        compressed ? uint64_t(reinterpret_cast<const typename ELFT::Chdr *>(contents->data())->ch_size) : contents->size();
    sections.push_back({*name, *contents, (*header)->sh_flags & ~uint64_t(ELF::SHF_COMPRESSED), (*header)->sh_entsize,
                        size, compressed});
  }
  return sections;
}

} // namespace

bool hasCompressedSection(const ModuleImage &file) {
  if (!file.isElf()) return false;
  for (const object::SectionRef &section : file.object().sections())
    if (object::ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED) return true;
  return false;
}

namespace {

// Copies or inflates each section to its offset in `out`. The largest
// compressed one (.debug_info: half of libc's debug file) is inflated on a
// second thread meanwhile, as the others are here: on a small dump, inflating
// a debug file is most of a cold walk's time.
// Each compressed section's file pages are dropped once it is inflated, so
// that the peak holds the twin and the compressed bytes still to read, not all
// of both (nothing reads them again; they would come back from the file).
template <class ELFT>
Error fillSections(const ModuleImage &file, const std::vector<TwinSection> &sections,
                   const std::vector<uint64_t> &offsets, MutableArrayRef<uint8_t> out) {
  auto fill = [&](size_t i) -> Error {
    const TwinSection &section = sections[i];
    MutableArrayRef<uint8_t> bytes(out.data() + offsets[i], section.size);
    if (section.compressed) {
      Error inflated = inflate<ELFT>(section.contents, bytes);
      file.releaseFilePages(section.contents);
      return inflated;
    }
    std::memcpy(bytes.data(), section.contents.data(), section.size);
    return Error::success();
  };
  size_t largest = sections.size();
  for (size_t i = 0; i < sections.size(); ++i)
    if (sections[i].compressed && (largest == sections.size() || sections[i].size > sections[largest].size))
      largest = i;
  std::future<Error> aside;
  if (largest != sections.size()) {
    try {
      aside = std::async(std::launch::async, fill, largest);
    } catch (const std::system_error &) {
      largest = sections.size(); // no thread to spare: filled with the others
    }
  }
  Error errors = Error::success();
  for (size_t i = 0; i < sections.size(); ++i)
    if (i != largest) errors = joinErrors(std::move(errors), fill(i));
  if (aside.valid()) errors = joinErrors(std::move(errors), aside.get());
  return errors;
}

// Uninitialized memory for a twin, in transparent huge pages where the
// system gives them on request (Debian's default, "madvise"): 2 MiB per page
// fault. Mapped here from a 2 MiB boundary, because memory from the allocator
// (LLVM's getNewUninitMemBuffer) starts anywhere, and its first 2 MiB on
// average were 4 KiB pages: 500 page faults, at about 10 us each in the
// Firecracker VMs CI runs on (a fifth of a cold .NET walk's page faults). Its
// end is not rounded up to a huge page: that held 2.3 MiB more at the peak of
// a small walk, for a millisecond.
class TwinBuffer : public WritableMemoryBuffer {
public:
  static std::unique_ptr<TwinBuffer> make(size_t size, const std::string &name) {
    constexpr size_t HugePage = 2 << 20;
    size_t mapped = alignTo(std::max<size_t>(size, 1), size_t(sysconf(_SC_PAGESIZE)));
    if (mapped < size || mapped + HugePage < mapped) return nullptr;
    // A huge page more than needed, to find the boundary in; the rest is unmapped again.
    void *reserved = mmap(nullptr, mapped + HugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) return nullptr;
    auto *base = static_cast<char *>(reserved);
    char *start = reinterpret_cast<char *>(alignTo(uintptr_t(base), HugePage));
    if (start != base) munmap(base, start - base);
    if (size_t after = HugePage - (start - base)) munmap(start + mapped, after);
    madvise(start, mapped, MADV_HUGEPAGE);
    return std::unique_ptr<TwinBuffer>(new TwinBuffer(start, size, mapped, name));
  }
  ~TwinBuffer() override { munmap(const_cast<char *>(getBufferStart()), mapped_); }
  StringRef getBufferIdentifier() const override { return name_; }
  // Anonymous memory, which MADV_DONTNEED would zero, unlike a file's pages (ModuleImage::releaseCompressedPages).
  BufferKind getBufferKind() const override { return MemoryBuffer_Malloc; }

private:
  TwinBuffer(char *start, size_t size, size_t mapped, std::string name) : mapped_(mapped), name_(std::move(name)) {
    init(start, start + size, /*RequiresNullTerminator=*/false);
  }
  size_t mapped_;
  std::string name_;
};

// The twin of a file of class ELFT, in that class.
template <class ELFT>
Expected<std::unique_ptr<WritableMemoryBuffer>> twinOf(const ModuleImage &file, const object::ELFObjectFile<ELFT> *elf,
                                                       uint64_t maxDebugBytes, TwinSections which,
                                                       const std::string &name) {
  using Ehdr = typename ELFT::Ehdr;
  using Shdr = typename ELFT::Shdr;
  const Ehdr &header = elf->getELFFile().getHeader();
  if (header.e_type != ELF::ET_EXEC && header.e_type != ELF::ET_DYN) return fail("not a linked file");
  if (!hasCompressedSection(file)) return fail("no compressed section");
  auto sections = twinSections<ELFT>(*elf, which);
  if (!sections) return sections.takeError();
  if (sections->size() + 2 >= ELF::SHN_LORESERVE) return fail("too many debug sections");

  // Header, section contents, names, then the table (null, sections, names).
  std::string names(1, '\0');
  uint64_t contentsEnd = sizeof(Ehdr), claimed = 0;
  for (const TwinSection &section : *sections) {
    // A compressed section can claim any size.
    if (section.size > maxDebugBytes - claimed) return fail("the sections claim too much to decompress");
    claimed += section.size;
    contentsEnd += section.size;
    names.append(section.name.data(), section.name.size()).push_back('\0');
  }
  names.append(".shstrtab").push_back('\0');
  uint64_t tableOffset = alignTo(contentsEnd + names.size(), 8);
  std::vector<Shdr> table(sections->size() + 2);
  std::memset(table.data(), 0, table.size() * sizeof(Shdr));
  std::unique_ptr<WritableMemoryBuffer> buffer = TwinBuffer::make(tableOffset + table.size() * sizeof(Shdr), name);
  if (!buffer) return fail("no memory for the decompressed sections");
  MutableArrayRef<uint8_t> out(reinterpret_cast<uint8_t *>(buffer->getBufferStart()), buffer->getBufferSize());

  uint64_t offset = sizeof(Ehdr), nameOffset = 1;
  std::vector<uint64_t> offsets;
  for (const TwinSection &section : *sections) {
    offsets.push_back(offset);
    offset += section.size;
  }
  if (Error err = fillSections<ELFT>(file, *sections, offsets, out)) return err;
  offset = sizeof(Ehdr);
  for (size_t i = 0; i < sections->size(); ++i) {
    const TwinSection &section = (*sections)[i];
    Shdr &entry = table[1 + i];
    entry.sh_name = uint32_t(nameOffset);
    entry.sh_type = ELF::SHT_PROGBITS;
    entry.sh_flags = section.flags;
    entry.sh_offset = offset;
    entry.sh_size = section.size;
    entry.sh_addralign = 1;
    entry.sh_entsize = section.entrySize;
    offset += section.size;
    nameOffset += section.name.size() + 1;
  }
  Shdr &nameTable = table.back();
  nameTable.sh_name = uint32_t(nameOffset);
  nameTable.sh_type = ELF::SHT_STRTAB;
  nameTable.sh_offset = contentsEnd;
  nameTable.sh_size = names.size();
  nameTable.sh_addralign = 1;
  std::memcpy(out.data() + contentsEnd, names.data(), names.size());
  std::memset(out.data() + contentsEnd + names.size(), 0, tableOffset - contentsEnd - names.size()); // alignment
  std::memcpy(out.data() + tableOffset, table.data(), table.size() * sizeof(Shdr));

  Ehdr twin;
  std::memset(&twin, 0, sizeof twin);
  std::memcpy(twin.e_ident, header.e_ident, ELF::EI_NIDENT);
  twin.e_type = header.e_type;
  twin.e_machine = header.e_machine;
  twin.e_version = ELF::EV_CURRENT;
  twin.e_shoff = tableOffset;
  twin.e_ehsize = sizeof(Ehdr);
  twin.e_shentsize = sizeof(Shdr);
  twin.e_shnum = uint16_t(table.size());
  twin.e_shstrndx = uint16_t(table.size() - 1);
  std::memcpy(out.data(), &twin, sizeof twin);
  return std::move(buffer);
}

} // namespace

// Written here rather than by LLVM's objcopy, which lays every section of
// its input out again at its alignment and allocates what a hostile file
// claims (fuzz_module_image: an alignment of 2^40). Linked files only: an
// object file's DWARF would need its relocation sections too.
Expected<std::unique_ptr<WritableMemoryBuffer>> debugSectionTwin(const ModuleImage &file, uint64_t maxDebugBytes,
                                                                 TwinSections which, const std::string &name) {
  if (const auto *elf = dyn_cast<object::ELF64LEObjectFile>(&file.object()))
    return twinOf(file, elf, maxDebugBytes, which, name);
  if (const auto *elf = dyn_cast<object::ELF32LEObjectFile>(&file.object()))
    return twinOf(file, elf, maxDebugBytes, which, name);
  return fail("not a little-endian ELF file");
}

std::unique_ptr<ModuleImage> debugSectionTwinImage(const ModuleImage &file, uint64_t maxDebugBytes,
                                                   const std::string &name, TwinSections which) {
  auto bytes = debugSectionTwin(file, maxDebugBytes, which, name);
  if (!bytes) {
    consumeError(bytes.takeError());
    return nullptr;
  }
  auto image = ModuleImage::fromFileBuffer(std::move(*bytes), name);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

} // namespace stackwalk
