#include "stackwalk/core/ModuleImage.h"
#include "GnuHashTable.h"
#include "stackwalk/core/RegularFile.h"
#include "stackwalk/core/ElfNotes.h"
#include "stackwalk/core/ElfSymbolTable.h"
#include "stackwalk/core/Fail.h"

#include "llvm/Object/COFF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;
using namespace llvm::object;

namespace stackwalk {

std::string hexString(std::span<const uint8_t> bytes) {
  static const char Digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(Digits[b >> 4]);
    out.push_back(Digits[b & 15]);
  }
  return out;
}

std::string pdbDebugId(std::span<const uint8_t, 16> guid, uint32_t age) {
  char text[64];
  auto le = [&](size_t at, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint32_t(guid[at + i]) << (8 * i);
    return v;
  };
  int n = std::snprintf(text, sizeof text, "%08X%04X%04X", le(0, 4), le(4, 2), le(6, 2));
  for (size_t i = 8; i < 16; ++i) n += std::snprintf(text + n, sizeof text - n, "%02X", guid[i]);
  std::snprintf(text + n, sizeof text - n, "%X", age);
  return text;
}

Expected<std::unique_ptr<ModuleImage>> ModuleImage::open(const std::string &path) {
  auto buffer = readRegularFile(path);
  if (!buffer) return errorCodeToError(buffer.getError());
  return fromFileBuffer(std::move(*buffer), path);
}

Expected<std::unique_ptr<ModuleImage>> ModuleImage::fromFileBuffer(std::unique_ptr<MemoryBuffer> buffer,
                                                                  const std::string &path) {
  std::unique_ptr<ModuleImage> image(new ModuleImage());
  image->path_ = path;
  image->buffer_ = std::move(buffer);
  if (Error err = image->parse()) return err;
  return image;
}

Expected<std::unique_ptr<ModuleImage>> ModuleImage::fromBytes(std::vector<uint8_t> bytes,
                                                              const std::string &name) {
  std::unique_ptr<ModuleImage> image(new ModuleImage());
  image->path_ = name;
  image->ownedBytes_ = std::move(bytes);
  StringRef data(reinterpret_cast<const char *>(image->ownedBytes_.data()), image->ownedBytes_.size());
  image->buffer_ = MemoryBuffer::getMemBuffer(data, name, /*RequiresNullTerminator=*/false);
  if (Error err = image->parse()) return err;
  return image;
}

Expected<std::unique_ptr<ModuleImage>> ModuleImage::fromMemory(const MemorySource &memory, uint64_t address,
                                                                uint64_t maxSize, const std::string &name) {
  // The image ends where readable memory does. Read it a chunk at a time, so
  // that what is allocated is what the dump holds, never the size it claims;
  // the last chunk is halved down to the exact end.
  constexpr uint64_t Chunk = 64 << 10, Smallest = 64;
  std::vector<uint8_t> bytes;
  for (uint64_t piece = Chunk; bytes.size() < maxSize && piece >= Smallest;) {
    uint64_t want = std::min<uint64_t>(piece, maxSize - bytes.size());
    size_t at = bytes.size();
    bytes.resize(at + want);
    if (memory.read(address + at, std::span(bytes).subspan(at))) continue;
    bytes.resize(at);
    piece = want / 2;
  }
  if (bytes.size() < Smallest) return fail("no image of " + name + " in the dump's memory");
  return fromBytes(std::move(bytes), name);
}

namespace {
template <typename ELFT> bool sectionInFile(const typename ELFT::Shdr &section, const ELFFile<ELFT> &file) {
  return section.sh_offset <= file.getBufSize() && section.sh_size <= file.getBufSize() - section.sh_offset;
}

// Whether every symbol table section has the entry size and bounds that
// LLVM's ELFObjectFile relies on without checking.
template <typename ELFT> bool symbolTablesWellFormed(const ELFFile<ELFT> &file) {
  auto sections = file.sections();
  if (!sections) {
    consumeError(sections.takeError());
    return false;
  }
  for (const auto &section : *sections) {
    if (section.sh_type != ELF::SHT_SYMTAB && section.sh_type != ELF::SHT_DYNSYM) continue;
    if (section.sh_entsize != sizeof(typename ELFT::Sym) || section.sh_link >= sections->size() ||
        !sectionInFile(section, file) || section.sh_size % sizeof(typename ELFT::Sym) != 0)
      return false;
  }
  return true;
}

// DWARFContext applies a relocatable object's relocations (a JIT's object
// registered with gdb) through ELFObjectFile calls that end the process on
// data they do not expect: report_fatal_error on a relocation section whose
// symbol table link or entries are out of range, a division by its entry size,
// cantFail on a CREL section's bytes. Each relocation section that relocates
// a section must have its entry size, lie in the file, link a section that
// exists and name only symbols of that table; there must be no CREL section.
// Files that are not relocatable objects have none of their relocations read.
template <typename ELFT> bool debugRelocationsWellFormed(const ELFFile<ELFT> &file) {
  if (file.getHeader().e_type != ELF::ET_REL) return true;
  auto sections = file.sections();
  if (!sections) {
    consumeError(sections.takeError());
    return false;
  }
  for (const auto &section : *sections) {
    bool rela = section.sh_type == ELF::SHT_RELA;
    if (section.sh_type != ELF::SHT_REL && !rela && section.sh_type != ELF::SHT_CREL) continue;
    if (section.sh_info >= sections->size()) continue; // LLVM relocates nothing with it
    if (section.sh_type == ELF::SHT_CREL) return false;
    size_t entrySize = rela ? sizeof(typename ELFT::Rela) : sizeof(typename ELFT::Rel);
    if (section.sh_entsize != entrySize || !sectionInFile(section, file) || section.sh_link >= sections->size())
      return false;
    const auto &symbols = (*sections)[section.sh_link];
    bool symbolTable = (symbols.sh_type == ELF::SHT_SYMTAB || symbols.sh_type == ELF::SHT_DYNSYM) &&
                       symbols.sh_entsize == sizeof(typename ELFT::Sym) && sectionInFile(symbols, file);
    uint64_t symbolCount = symbolTable ? symbols.sh_size / sizeof(typename ELFT::Sym) : 0;
    const uint8_t *entries = file.base() + section.sh_offset;
    for (uint64_t at = 0; at + entrySize <= section.sh_size; at += entrySize) {
      // r_info follows r_offset in both forms; a symbol index of 0 names no symbol.
      typename ELFT::Rel entry;
      std::memcpy(&entry, entries + at, sizeof(entry));
      uint32_t symbol = entry.getSymbol(file.isMips64EL());
      if (symbol != 0 && symbol >= symbolCount) return false;
    }
  }
  return true;
}

template <typename ELFT>
Error readElfLayout(const ELFObjectFile<ELFT> &elf, std::vector<LoadSegment> &segments,
                    std::vector<uint8_t> &buildId, uint64_t &preferredBase) {
  const ELFFile<ELFT> &file = elf.getELFFile();
  auto phdrs = file.program_headers();
  if (!phdrs) return phdrs.takeError();
  StringRef bytes = elf.getData();
  bool first = true;
  for (const auto &ph : *phdrs) {
    if (ph.p_type == ELF::PT_LOAD) {
      segments.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, bool(ph.p_flags & ELF::PF_X)});
      uint64_t aligned = ph.p_align > 1 ? ph.p_vaddr & ~(uint64_t(ph.p_align) - 1) : ph.p_vaddr;
      aligned &= ~uint64_t(0xfff);
      if (first || aligned < preferredBase) preferredBase = aligned;
      first = false;
    } else if (ph.p_type == ELF::PT_NOTE && buildId.empty()) {
      if (ph.p_offset > bytes.size() || ph.p_filesz > bytes.size() - ph.p_offset) continue;
      auto notes = std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()) + ph.p_offset,
                                            ph.p_filesz);
      auto id = findGnuBuildId(notes);
      buildId.assign(id.begin(), id.end());
    }
  }
  // An object without program headers (a JIT's relocatable object, registered
  // with its sections at their final addresses) loads where its sections say.
  if (segments.empty()) {
    bool first = true;
    for (const ELFSectionRef section : elf.sections()) {
      if (!(section.getFlags() & ELF::SHF_ALLOC) || section.getAddress() == 0) continue;
      uint64_t fileSize = section.getType() == ELF::SHT_NOBITS ? 0 : section.getSize();
      const auto *header = elf.getSection(section.getRawDataRefImpl());
      segments.push_back({section.getAddress(), section.getSize(), header->sh_offset, fileSize,
                          bool(section.getFlags() & ELF::SHF_EXECINSTR)});
      if (first || section.getAddress() < preferredBase) preferredBase = section.getAddress();
      first = false;
    }
  }
  // Separate debug files keep the note sections but may mark PT_NOTE's bytes
  // NOBITS; look at the section too.
  if (buildId.empty()) {
    for (const SectionRef &section : elf.sections()) {
      Expected<StringRef> name = section.getName();
      if (!name || *name != ".note.gnu.build-id") {
        if (!name) consumeError(name.takeError());
        continue;
      }
      if (Expected<StringRef> contents = section.getContents()) {
        auto id = findGnuBuildId({reinterpret_cast<const uint8_t *>(contents->data()), contents->size()});
        buildId.assign(id.begin(), id.end());
      } else {
        consumeError(contents.takeError());
      }
    }
  }
  return Error::success();
}
} // namespace

namespace {
// A PE image's sections as loadable segments at ImageBase + RVA, with the
// headers at the image base, so reads by address work as in the process.
void readPeLayout(const COFFObjectFile &coff, std::vector<LoadSegment> &segments, uint64_t &preferredBase,
                  std::optional<ModuleImage::PeIdentity> &identity) {
  const pe32plus_header *header64 = coff.getPE32PlusHeader();
  const pe32_header *header32 = coff.getPE32Header();
  if (!header64 && !header32) return;
  preferredBase = coff.getImageBase();
  uint32_t headersSize = header64 ? header64->SizeOfHeaders : header32->SizeOfHeaders;
  uint32_t imageSize = header64 ? header64->SizeOfImage : header32->SizeOfImage;
  identity = ModuleImage::PeIdentity{coff.getTimeDateStamp(), imageSize};
  segments.push_back({preferredBase, headersSize, 0, headersSize, false});
  for (const SectionRef &ref : coff.sections()) {
    const coff_section *section = coff.getCOFFSection(ref);
    uint64_t memSize = std::max<uint64_t>(section->VirtualSize, section->SizeOfRawData);
    segments.push_back({preferredBase + section->VirtualAddress, memSize, section->PointerToRawData,
                        std::min<uint64_t>(section->SizeOfRawData, memSize),
                        bool(section->Characteristics & COFF::IMAGE_SCN_MEM_EXECUTE)});
  }
}
// Where COFFObjectFile::getRvaPtr maps an RVA in the file: through the first
// section whose virtual range holds it, in 32-bit arithmetic; nullopt where
// LLVM reports an error instead (no such section, or past the raw data of a
// section whose virtual size is larger).
std::optional<uint64_t> rvaFileOffset(const COFFObjectFile &coff, uint32_t rva) {
  for (const SectionRef &ref : coff.sections()) {
    const coff_section *section = coff.getCOFFSection(ref);
    uint32_t start = section->VirtualAddress, end = start + section->VirtualSize;
    if (start > rva || rva >= end) continue;
    if (section->SizeOfRawData < section->VirtualSize && rva >= start + section->SizeOfRawData) return std::nullopt;
    return uint64_t(section->PointerToRawData) + (rva - start);
  }
  return std::nullopt;
}

// Exports x names that LLVM's symbolizer may compare: it finds each export's
// name by scanning the whole name table. Far above any real DLL (ntdll: ~2,500
// x 2,500) and about a second of work.
constexpr uint64_t MaxExportNameComparisons = uint64_t(1) << 28;

// LLVM 19's export readers (ExportDirectoryEntryRef::getSymbolName,
// getExportRVA) map each table's RVA to a pointer and index it, and read each
// name up to its NUL, without looking for the end of the file
// (fuzz/findings/llvm19-coff-export-name-past-file). The tables are handed to
// LLVM only when every byte it would read is in the file.
bool exportTablesInFile(const COFFObjectFile &coff) {
  const export_directory_table_entry *table = coff.getExportTable();
  if (!table) return true;
  StringRef file = coff.getData();
  auto inFile = [&](std::optional<uint64_t> offset, uint64_t bytes) {
    return !offset || (*offset <= file.size() && bytes <= file.size() - *offset); // unmapped: LLVM says so itself
  };
  const char *tableStart = reinterpret_cast<const char *>(table);
  if (!inFile(uint64_t(tableStart - file.data()), sizeof *table)) return false;
  uint64_t functions = table->AddressTableEntries, names = table->NumberOfNamePointers;
  if (functions * names > MaxExportNameComparisons) return false;
  std::optional<uint64_t> namePointers = rvaFileOffset(coff, table->NamePointerRVA);
  if (!inFile(rvaFileOffset(coff, table->ExportAddressTableRVA), functions * 4) ||
      !inFile(rvaFileOffset(coff, table->OrdinalTableRVA), names * 2) || !inFile(namePointers, names * 4))
    return false;
  for (uint64_t i = 0; namePointers && i < names; ++i) {
    uint32_t nameRva;
    std::memcpy(&nameRva, file.data() + *namePointers + 4 * i, 4);
    std::optional<uint64_t> name = rvaFileOffset(coff, nameRva);
    if (name && (*name >= file.size() || file.find('\0', *name) == StringRef::npos)) return false;
  }
  return true;
}

} // namespace

Error ModuleImage::parse() {
  auto object = ObjectFile::createObjectFile(buffer_->getMemBufferRef());
  if (!object) return object.takeError();
  object_ = std::move(*object);
  if (auto *coff = dyn_cast<COFFObjectFile>(object_.get())) {
    readPeLayout(*coff, segments_, preferredBase_, peIdentity_);
    symbolTablesUsable_ = exportTablesInFile(*coff);
    return Error::success();
  }
  if (auto *elf = dyn_cast<ELF64LEObjectFile>(object_.get())) {
    symbolTablesUsable_ = symbolTablesWellFormed(elf->getELFFile());
    debugRelocationsUsable_ = debugRelocationsWellFormed(elf->getELFFile());
    return readElfLayout(*elf, segments_, buildId_, preferredBase_);
  }
  if (auto *elf = dyn_cast<ELF32LEObjectFile>(object_.get())) {
    symbolTablesUsable_ = symbolTablesWellFormed(elf->getELFFile());
    debugRelocationsUsable_ = debugRelocationsWellFormed(elf->getELFFile());
    return readElfLayout(*elf, segments_, buildId_, preferredBase_);
  }
  // Other formats (big-endian ELF, Mach-O) are not modules stackwalk reads.
  if (isa<ELFObjectFileBase>(object_.get())) symbolTablesUsable_ = debugRelocationsUsable_ = false;
  return Error::success();
}

namespace {

// LLVM 19 maps a debug directory's record through its section's virtual size
// only, and reads the PDB path from wherever that lands, also past the end of
// the file (fuzz/findings/llvm19-coff-codeview-record-past-file*). The record
// is handed to it only when its bytes are in the file, in the section
// getRvaAndSizeAsBytes picks: the first whose virtual size holds the whole
// record, in its 32-bit arithmetic.
bool recordIsInFile(const COFFObjectFile &coff, const debug_directory &entry) {
  uint64_t fileSize = coff.getData().size();
  uint32_t rva = entry.AddressOfRawData, size = entry.SizeOfData;
  for (const SectionRef &sectionRef : coff.sections()) {
    const coff_section *section = coff.getCOFFSection(sectionRef);
    uint32_t offset = rva - section->VirtualAddress;
    if (section->VirtualAddress > rva || offset >= section->VirtualSize || size > section->VirtualSize - offset) continue;
    uint64_t end = uint64_t(section->PointerToRawData) + offset + size;
    return uint64_t(offset) + size <= section->SizeOfRawData && end <= fileSize;
  }
  return false;
}

} // namespace

std::optional<ModuleImage::PdbReference> ModuleImage::pdbReference() const {
  const auto *coff = dyn_cast<COFFObjectFile>(object_.get());
  if (!coff) return std::nullopt;
  const codeview::DebugInfo *info = nullptr;
  StringRef path;
  for (const debug_directory &entry : coff->debug_directories()) {
    if (entry.Type != COFF::IMAGE_DEBUG_TYPE_CODEVIEW) continue;
    if (!recordIsInFile(*coff, entry)) return std::nullopt;
    if (Error err = coff->getDebugPDBInfo(&entry, info, path)) {
      consumeError(std::move(err));
      return std::nullopt;
    }
    break;
  }
  if (!info || info->Signature.CVSignature != OMF::Signature::PDB70) return std::nullopt;
  // Built on Windows or elsewhere: the name after the last separator of either kind.
  size_t slash = path.find_last_of("\\/");
  return PdbReference{std::string(slash == StringRef::npos ? path : path.substr(slash + 1)),
                      pdbDebugId(std::span<const uint8_t, 16>(info->PDB70.Signature, 16), info->PDB70.Age)};
}

namespace {

// A 64-bit little-endian ELF file's .symtab, then .dynsym, read as their
// typed arrays: LLVM's generic SymbolRef looks each symbol's section and
// string table up again, which made indexing libc's 10,000 symbols a tenth
// of a small walk. The address is st_value, as LLVM gives it for linked
// files of these machines. False when the tables cannot be read so.
template <typename Visit> bool forEachElf64SymbolTable(const ELF64LEObjectFile &elf, Visit visit) {
  const ELFFile<ELF64LE> &file = elf.getELFFile();
  auto sections = file.sections();
  if (!sections) {
    consumeError(sections.takeError());
    return false;
  }
  for (unsigned type : {ELF::SHT_SYMTAB, ELF::SHT_DYNSYM})
    for (const ELF64LE::Shdr &section : *sections) {
      if (section.sh_type != type) continue;
      auto symbols = file.symbols(&section);
      auto strings = file.getStringTableForSymtab(section, *sections);
      if (!symbols || !strings) {
        if (!symbols) consumeError(symbols.takeError());
        if (!strings) consumeError(strings.takeError());
        continue;
      }
      if (visit(*symbols, *strings)) return true;
    }
  return true;
}

// Undefined symbols (a module's imports) have no address of their own.
bool isDefined(const ELF64LE::Sym &symbol) { return symbol.st_shndx != ELF::SHN_UNDEF; }

bool indexElf64Symbols(const ELF64LEObjectFile &elf, DenseMap<StringRef, uint64_t> &index) {
  return forEachElf64SymbolTable(elf, [&](ArrayRef<ELF64LE::Sym> symbols, StringRef strings) {
    for (const ELF64LE::Sym &symbol : symbols) {
      auto symbolName = symbol.getName(strings);
      if (!symbolName) {
        consumeError(symbolName.takeError());
        continue;
      }
      if (!symbolName->empty() && isDefined(symbol)) index.try_emplace(*symbolName, symbol.st_value);
    }
    return false;
  });
}

// Whether the symbol's name is `name`, compared in place in the string
// table: no strlen, no hashing.
bool symbolNamed(const ELF64LE::Sym &symbol, StringRef strings, StringRef name) {
  uint64_t at = symbol.st_name;
  return at < strings.size() && strings.size() - at > name.size() && strings[at + name.size()] == '\0' &&
         std::memcmp(strings.data() + at, name.data(), name.size()) == 0;
}

// The symbol the index would give for `name` (the first in .symtab, then
// .dynsym), found by comparing each name in place: no table of every name
// for the few a walk asks a module for.
bool scanElf64Symbols(const ELF64LEObjectFile &elf, StringRef name, std::optional<uint64_t> &found) {
  if (name.empty()) return false; // the index leaves nameless symbols out: let it answer
  return forEachElf64SymbolTable(elf, [&](ArrayRef<ELF64LE::Sym> symbols, StringRef strings) {
    for (const ELF64LE::Sym &symbol : symbols)
      if (isDefined(symbol) && symbolNamed(symbol, strings, name)) {
        found = symbol.st_value;
        return true;
      }
    return false;
  });
}

// What the GNU hash table says of `name`, in a file whose only symbol table
// is .dynsym (a .symtab's symbols would come first): answered (the address,
// or none defined), or not answered (no usable table: scan instead). The
// walk asks every module for its JIT and libunwind registries, three names;
// scanning every symbol for each was 5% of a warm walk of the .NET test dump.
struct HashedLookup {
  bool answered = false;
  std::optional<uint64_t> address;
};

HashedLookup lookUpByGnuHash(const ELF64LEObjectFile &elf, StringRef name) {
  if (name.empty()) return {}; // as the scan: nameless symbols are not looked up
  const ELFFile<ELF64LE> &file = elf.getELFFile();
  auto sections = file.sections();
  if (!sections) {
    consumeError(sections.takeError());
    return {};
  }
  const ELF64LE::Shdr *dynsym = nullptr;
  for (const ELF64LE::Shdr &section : *sections) {
    if (section.sh_type == ELF::SHT_SYMTAB || (section.sh_type == ELF::SHT_DYNSYM && dynsym)) return {};
    if (section.sh_type == ELF::SHT_DYNSYM) dynsym = &section;
  }
  if (!dynsym) return {};
  auto symbols = file.symbols(dynsym);
  auto strings = file.getStringTableForSymtab(*dynsym, *sections);
  if (!symbols || !strings) {
    if (!symbols) consumeError(symbols.takeError());
    if (!strings) consumeError(strings.takeError());
    return {};
  }
  auto table = GnuHashTable::forSymbols(file, *sections, *dynsym, symbols->size());
  if (!table) return {};
  auto index = table->find(name, [&](uint32_t at) {
    return isDefined((*symbols)[at]) && symbolNamed((*symbols)[at], *strings, name);
  });
  return {true, index ? std::optional<uint64_t>((*symbols)[*index].st_value) : std::nullopt};
}

void indexSymbols(const ObjectFile &object, DenseMap<StringRef, uint64_t> &index) {
  const auto *elf64 = dyn_cast<ELF64LEObjectFile>(&object);
  if (elf64 && elf64->getELFFile().getHeader().e_type != ELF::ET_REL && indexElf64Symbols(*elf64, index)) return;
  if (!llvmReadsAllSymbolNamesInBounds(object)) return; // no names, rather than a read past the file
  auto add = [&](auto symbols) {
    for (const SymbolRef &symbol : symbols) {
      Expected<StringRef> symbolName = symbol.getName();
      Expected<uint64_t> address = symbol.getAddress();
      if (symbolName && address && !symbolName->empty()) index.try_emplace(*symbolName, *address);
      if (!symbolName) consumeError(symbolName.takeError());
      if (!address) consumeError(address.takeError());
    }
  };
  add(object.symbols());
  if (const auto *elf = dyn_cast<ELFObjectFileBase>(&object)) {
    auto dynamic = elf->getDynamicSymbolIterators();
    add(llvm::make_range(dynamic.begin(), dynamic.end()));
  }
}

} // namespace

std::optional<uint64_t> ModuleImage::symbolAddress(StringRef name) const {
  if (!symbolTablesUsable_) return std::nullopt;
  // A walk asks most modules for two or three names (JIT and libunwind
  // registries): scanned for; past that, an index of every name is cheaper.
  constexpr unsigned ScannedLookups = 4;
  const auto *elf64 = dyn_cast<ELF64LEObjectFile>(object_.get());
  if (!symbolIndex_ && elf64 && elf64->getELFFile().getHeader().e_type != ELF::ET_REL) {
    if (HashedLookup hashed = lookUpByGnuHash(*elf64, name); hashed.answered) return hashed.address;
    if (scannedLookups_ < ScannedLookups) {
      ++scannedLookups_;
      std::optional<uint64_t> found;
      if (scanElf64Symbols(*elf64, name, found)) return found;
    }
  }
  if (!symbolIndex_) {
    symbolIndex_ = std::make_unique<DenseMap<StringRef, uint64_t>>();
    indexSymbols(*object_, *symbolIndex_);
  }
  auto found = symbolIndex_->find(name);
  if (found != symbolIndex_->end()) return found->second;
  // A DLL's exports after its symbol table, as before the index.
  if (const auto *coff = dyn_cast<COFFObjectFile>(object_.get())) return exportAddress(*coff, name);
  return std::nullopt;
}

bool ModuleImage::hasSymbolAt(StringRef name, uint64_t fileAddress) const {
  if (!symbolTablesUsable_) return false;
  const auto *elf64 = dyn_cast<ELF64LEObjectFile>(object_.get());
  if (!elf64 || elf64->getELFFile().getHeader().e_type == ELF::ET_REL || name.empty())
    return symbolAddress(name) == fileAddress;
  bool found = false;
  forEachElf64SymbolTable(*elf64, [&](ArrayRef<ELF64LE::Sym> symbols, StringRef strings) {
    for (const ELF64LE::Sym &symbol : symbols)
      if (symbol.st_value == fileAddress && symbolNamed(symbol, strings, name)) return found = true;
    return false;
  });
  return found;
}

// A DLL's exports are not in its COFF symbol table (release DLLs have none):
// by name, at ImageBase + RVA as COFF symbols are; forwarders have no address.
std::optional<uint64_t> ModuleImage::exportAddress(const COFFObjectFile &coff, StringRef name) const {
  for (const ExportDirectoryEntryRef &entry : coff.export_directories()) {
    StringRef exportName;
    uint32_t rva = 0;
    bool forwarder = true;
    if (Error err = entry.getSymbolName(exportName)) {
      consumeError(std::move(err));
      continue;
    }
    if (exportName != name) continue;
    if (Error err = entry.isForwarder(forwarder)) consumeError(std::move(err));
    if (Error err = entry.getExportRVA(rva)) consumeError(std::move(err));
    else if (!forwarder) return preferredBase_ + rva;
  }
  return std::nullopt;
}

bool ModuleImage::isElf() const { return isa<ELFObjectFileBase>(object_.get()); }

std::optional<std::array<uint8_t, 16>> ModuleImage::breakpadFileId() const {
  if (!isElf()) return std::nullopt;
  std::array<uint8_t, 16> id{};
  if (!buildId_.empty()) {
    std::copy_n(buildId_.begin(), std::min(buildId_.size(), id.size()), id.begin());
    return id;
  }
  std::optional<Section> text = section(".text");
  if (!text || text->data.empty()) return std::nullopt;
  llvm::StringRef page = text->data.take_front(4096);
  for (size_t i = 0; i < page.size(); ++i) id[i % 16] ^= uint8_t(page[i]);
  return id;
}

bool ModuleImage::readAtFileAddress(uint64_t vaddr, std::span<uint8_t> out) const {
  StringRef bytes = buffer_->getBuffer();
  for (const LoadSegment &seg : segments_) {
    if (vaddr < seg.vaddr || vaddr - seg.vaddr >= seg.memSize) continue;
    uint64_t delta = vaddr - seg.vaddr;
    // Only bytes that the file holds: the zero-filled tail (.bss) is process
    // state the file cannot know.
    if (delta > seg.fileSize || out.size() > seg.fileSize - delta) return false;
    uint64_t offset = seg.fileOffset + delta;
    if (offset > bytes.size() || out.size() > bytes.size() - offset) return false;
    if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size()); // an empty span's data may be null
    return true;
  }
  return false;
}

bool ModuleImage::readAtFileOffset(uint64_t offset, std::span<uint8_t> out) const {
  StringRef bytes = buffer_->getBuffer();
  if (offset > bytes.size() || out.size() > bytes.size() - offset) return false;
  if (!out.empty()) std::memcpy(out.data(), bytes.data() + offset, out.size());
  return true;
}

std::optional<ModuleImage::Section> ModuleImage::section(StringRef name) const {
  // Named once, on the first lookup: a walk asks each image for a few
  // sections many times (a signal trampoline's check at every frame).
  if (!sectionsByName_) {
    sectionsByName_ = std::make_unique<StringMap<SectionRef>>();
    for (const SectionRef &section : object_->sections()) {
      Expected<StringRef> sectionName = section.getName();
      if (sectionName) sectionsByName_->try_emplace(*sectionName, section); // the first of a name, as before
      else consumeError(sectionName.takeError());
    }
  }
  auto found = sectionsByName_->find(name);
  if (found != sectionsByName_->end()) {
    const SectionRef &section = found->second;
    if (section.isBSS()) return std::nullopt;
    Expected<StringRef> contents = section.getContents();
    if (!contents) {
      consumeError(contents.takeError());
      return std::nullopt;
    }
    bool compressed = isElf() && (ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED);
    return Section{*contents, section.getAddress(), compressed};
  }
  return std::nullopt;
}

std::optional<std::pair<std::string, uint32_t>> ModuleImage::debugLink() const {
  auto link = section(".gnu_debuglink");
  if (!link) return std::nullopt;
  StringRef data = link->data;
  size_t nul = data.find('\0');
  if (nul == StringRef::npos || nul == 0) return std::nullopt;
  size_t crcOffset = (nul + 4) & ~size_t(3);
  if (crcOffset + 4 > data.size()) return std::nullopt;
  uint32_t crc = support::endian::read32le(data.data() + crcOffset);
  return std::make_pair(data.substr(0, nul).str(), crc);
}

void ModuleImage::releaseCompressedPages() const {
  if (!isElf()) return;
  for (const SectionRef &section : object_->sections()) {
    if (!(ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED)) continue;
    Expected<StringRef> contents = section.getContents();
    if (!contents) {
      consumeError(contents.takeError());
      continue;
    }
    releaseFilePages(*contents);
  }
}

void ModuleImage::releaseFilePages(StringRef bytes) const {
  // Only a file mapping may be dropped: on heap memory MADV_DONTNEED zeroes.
  if (buffer_->getBufferKind() != MemoryBuffer::MemoryBuffer_MMap) return;
  const long pageSize = sysconf(_SC_PAGESIZE);
  uintptr_t fileStart = reinterpret_cast<uintptr_t>(buffer_->getBufferStart());
  uintptr_t fileEnd = fileStart + buffer_->getBufferSize();
  // Only whole pages inside the range, never a neighbour's.
  uintptr_t start = reinterpret_cast<uintptr_t>(bytes.data());
  uintptr_t first = (start + pageSize - 1) & ~uintptr_t(pageSize - 1);
  uintptr_t last = (start + bytes.size()) & ~uintptr_t(pageSize - 1);
  if (first < last && first >= fileStart && start + bytes.size() <= fileEnd)
    madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

uint64_t ModuleImage::debugInfoBytes() const {
  uint64_t total = 0;
  for (const SectionRef &section : object_->sections()) {
    // LLVM's DWARFContext decompresses every compressed section, whatever
    // its name or if it has none (found by fuzz_module_image), so each of
    // those counts too.
    bool compressed = isElf() && (ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED);
    Expected<StringRef> name = section.getName();
    bool debug = name && name->starts_with(".debug_");
    if (!name) consumeError(name.takeError());
    if (!debug && !compressed) continue;
    uint64_t size = section.getSize();
    // ELF compressed sections start with a header: Elf64_Chdr {type,
    // reserved, size, align}, or in ELF32 Elf32_Chdr {type, size, align}.
    if (compressed) {
      bool elf32 = object_->getBytesInAddress() == 4;
      Expected<StringRef> contents = section.getContents();
      if (contents && contents->size() >= (elf32 ? 12u : 16u))
        size = elf32 ? support::endian::read32le(contents->data() + 4) : support::endian::read64le(contents->data() + 8);
      else if (!contents) consumeError(contents.takeError());
    }
    total += std::min<uint64_t>(size, UINT64_MAX - total);
  }
  return total;
}

bool ModuleImage::hasDwarf() const {
  auto info = section(".debug_info");
  return info && !info->data.empty();
}

bool ModuleImage::hasSymbolTable() const {
  auto symtab = section(".symtab");
  return symtab && !symtab->data.empty();
}

std::shared_ptr<const ElfSymbolTable> ModuleImage::elfSymbols() const {
  if (!elfSymbols_) {
    std::optional<ElfSymbolTable> table;
    if (symbolTablesUsable_) table = ElfSymbolTable::read(*object_);
    elfSymbols_ = table ? std::make_shared<const ElfSymbolTable>(std::move(*table)) : nullptr;
  }
  return *elfSymbols_;
}

const PltStubs &ModuleImage::pltStubs() const {
  if (!pltStubs_) pltStubs_ = std::make_unique<const PltStubs>(PltStubs::read(*object_));
  return *pltStubs_;
}

std::string_view ModuleImage::symbolSource() const {
  if (!pdbPath_.empty()) return "pdb";
  if (hasDwarf() || debugImage()) return "dwarf";
  return hasSymbolTable() ? "symtab" : "dynsym";
}

const std::string &ModuleImage::debugInfoPath() const {
  static const std::string none;
  if (!pdbPath_.empty()) return pdbPath_;
  return debug_ ? debug_->path() : none;
}

} // namespace stackwalk
