#include "stackwalk/core/DecompressedDebugCache.h"

#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/Decompressor.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;
using llvm::object::ELF64LE;

namespace stackwalk {
namespace {

// After the ELF bytes: magic, their length, their xxh3 (little-endian).
constexpr char TrailerMagic[8] = {'S', 'W', 'I', 'N', 'F', 'L', '0', '1'};
constexpr size_t TrailerSize = 24;

bool hasCompressedSection(const object::ObjectFile &object) {
  for (const object::SectionRef &section : object.sections())
    if (object::ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED) return true;
  return false;
}

std::string join(std::initializer_list<StringRef> parts) {
  SmallString<256> out;
  for (StringRef part : parts) sys::path::append(out, part);
  return std::string(out);
}

} // namespace

// The twin is written here rather than by LLVM's objcopy, which lays every
// section of the input out again with its alignment and allocates what a
// hostile file claims (fuzz_module_image: an alignment of 2^40). The twin
// needs only the DWARF: an ELF header, the .debug_* sections (decompressed)
// back to back, their names and the section table. Linked files only: an
// object file's DWARF would need its relocation sections too.
Expected<SmallVector<char, 0>> decompressDebugSections(const ModuleImage &file, uint64_t maxDebugBytes) {
  const auto *elf = dyn_cast<object::ELF64LEObjectFile>(&file.object());
  if (!elf) return createStringError("not a 64-bit little-endian ELF file");
  const ELF64LE::Ehdr &header = elf->getELFFile().getHeader();
  if (header.e_type != ELF::ET_EXEC && header.e_type != ELF::ET_DYN) return createStringError("not a linked file");
  if (!hasCompressedSection(*elf)) return createStringError("no compressed section");
  if (file.debugInfoBytes() > maxDebugBytes) return createStringError("the sections claim too much to decompress");

  struct Piece {
    StringRef name;
    uint64_t flags, entrySize;
    SmallVector<char, 0> bytes;
  };
  std::vector<Piece> pieces;
  for (const object::SectionRef &section : elf->sections()) {
    Expected<StringRef> name = section.getName();
    if (!name) return name.takeError();
    if (!name->starts_with(".debug_") && *name != ".gdb_index") continue;
    Expected<StringRef> contents = section.getContents();
    if (!contents) return contents.takeError();
    object::ELFSectionRef elfSection(section);
    Piece piece{*name, elfSection.getFlags() & ~uint64_t(ELF::SHF_COMPRESSED), 0, {}};
    if (auto shdr = elf->getELFFile().getSection(section.getIndex())) piece.entrySize = (*shdr)->sh_entsize;
    else consumeError(shdr.takeError());
    if (elfSection.getFlags() & ELF::SHF_COMPRESSED) {
      auto decompressor = object::Decompressor::create(*name, *contents, /*IsLE=*/true, /*Is64Bit=*/true);
      if (!decompressor) return decompressor.takeError();
      if (Error err = decompressor->resizeAndDecompress(piece.bytes)) return err;
    } else {
      piece.bytes.assign(contents->begin(), contents->end());
    }
    pieces.push_back(std::move(piece));
  }

  // Header, section contents, names, then the table (null, pieces, names).
  SmallVector<char, 0> out(sizeof(ELF64LE::Ehdr), 0);
  std::vector<ELF64LE::Shdr> table(1 + pieces.size() + 1);
  std::string names(1, '\0');
  auto addName = [&](StringRef name) {
    uint32_t at = uint32_t(names.size());
    names.append(name.data(), name.size()).push_back('\0');
    return at;
  };
  for (size_t i = 0; i < pieces.size(); ++i) {
    ELF64LE::Shdr &entry = table[1 + i];
    std::memset(&entry, 0, sizeof entry);
    entry.sh_name = addName(pieces[i].name);
    entry.sh_type = ELF::SHT_PROGBITS;
    entry.sh_flags = pieces[i].flags;
    entry.sh_offset = out.size();
    entry.sh_size = pieces[i].bytes.size();
    entry.sh_addralign = 1;
    entry.sh_entsize = pieces[i].entrySize;
    out.append(pieces[i].bytes.begin(), pieces[i].bytes.end());
    pieces[i].bytes = {};
  }
  ELF64LE::Shdr &nameTable = table.back();
  std::memset(&nameTable, 0, sizeof nameTable);
  std::memset(&table.front(), 0, sizeof(ELF64LE::Shdr));
  nameTable.sh_name = addName(".shstrtab");
  nameTable.sh_type = ELF::SHT_STRTAB;
  nameTable.sh_offset = out.size();
  nameTable.sh_size = names.size();
  nameTable.sh_addralign = 1;
  out.append(names.begin(), names.end());
  out.resize(alignTo(out.size(), 8), 0);
  uint64_t tableOffset = out.size();
  const char *tableBytes = reinterpret_cast<const char *>(table.data());
  out.append(tableBytes, tableBytes + table.size() * sizeof(ELF64LE::Shdr));

  ELF64LE::Ehdr twin;
  std::memset(&twin, 0, sizeof twin);
  std::memcpy(twin.e_ident, header.e_ident, ELF::EI_NIDENT);
  twin.e_type = header.e_type;
  twin.e_machine = header.e_machine;
  twin.e_version = ELF::EV_CURRENT;
  twin.e_shoff = tableOffset;
  twin.e_ehsize = sizeof(ELF64LE::Ehdr);
  twin.e_shentsize = sizeof(ELF64LE::Shdr);
  twin.e_shnum = uint16_t(table.size());
  twin.e_shstrndx = uint16_t(table.size() - 1);
  if (table.size() >= ELF::SHN_LORESERVE) return createStringError("too many debug sections");
  std::memcpy(out.data(), &twin, sizeof twin);
  return out;
}

DecompressedDebugCache::DecompressedDebugCache(std::string dir, uint64_t maxBytes)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {}

std::string DecompressedDebugCache::entryPath(ArrayRef<uint8_t> source) const {
  auto digest = BLAKE3::hash<16>(source);
  std::string key = toHex(digest, /*LowerCase=*/true);
  return join({dir_, ".inflated", StringRef(key).take_front(2), StringRef(key).drop_front(2).str() + ".debug"});
}

std::unique_ptr<ModuleImage> DecompressedDebugCache::twin(const ModuleImage &file, uint64_t maxDebugBytes) const {
  if (file.inMemory() || !file.isElf() || !hasCompressedSection(file.object())) return nullptr;
  StringRef data = file.object().getData();
  std::string path = entryPath(arrayRefFromStringRef(data));
  // Hashing read the compressed sections' pages, which nothing reads again.
  file.releaseCompressedPages();
  if (auto cached = openChecked(path)) {
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // recently used: kept longest
    return cached;
  }
  auto bytes = decompressDebugSections(file, maxDebugBytes);
  if (!bytes) {
    consumeError(bytes.takeError());
    return nullptr;
  }
  if (!store(path, std::move(*bytes))) return nullptr;
  evictBeyondLimit();
  return openChecked(path);
}

std::unique_ptr<ModuleImage> DecompressedDebugCache::openChecked(const std::string &path) const {
  auto buffer = readRegularFile(path);
  if (!buffer) return nullptr;
  StringRef data = (*buffer)->getBuffer();
  if (data.size() < TrailerSize) return nullptr;
  StringRef body = data.drop_back(TrailerSize), trailer = data.take_back(TrailerSize);
  if (std::memcmp(trailer.data(), TrailerMagic, sizeof TrailerMagic) != 0 ||
      support::endian::read64le(trailer.data() + 8) != body.size() ||
      support::endian::read64le(trailer.data() + 16) != xxh3_64bits(body))
    return nullptr;
  // The check read every page; the walk needs few of them again.
  if ((*buffer)->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap) {
    uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    uintptr_t start = (uintptr_t(data.data()) + page - 1) & ~(page - 1), end = uintptr_t(data.end()) & ~(page - 1);
    if (start < end) madvise(reinterpret_cast<void *>(start), end - start, MADV_DONTNEED);
  }
  auto image = ModuleImage::fromFileBuffer(std::move(*buffer), path);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

bool DecompressedDebugCache::store(const std::string &path, SmallVector<char, 0> bytes) const {
  char trailer[TrailerSize];
  std::memcpy(trailer, TrailerMagic, sizeof TrailerMagic);
  support::endian::write64le(trailer + 8, bytes.size());
  support::endian::write64le(trailer + 16, xxh3_64bits(StringRef(bytes.data(), bytes.size())));
  bytes.append(std::begin(trailer), std::end(trailer));
  // Beside the entries (one file system, so the rename is atomic), not in
  // their folders: a reader sees a whole entry or none.
  std::string partial = join({dir_, ".partial"});
  if (sys::fs::create_directories(partial) || sys::fs::create_directories(sys::path::parent_path(path))) return false;
  int fd = -1;
  SmallString<256> temporary;
  if (sys::fs::createUniqueFile(join({partial, "inflated-%%%%%%%%%%%%"}), fd, temporary)) return false;
  bool written;
  {
    raw_fd_ostream out(fd, /*shouldClose=*/true);
    out.write(bytes.data(), bytes.size());
    out.close();
    written = !out.has_error();
    if (!written) out.clear_error();
  }
  if (written && !sys::fs::rename(temporary, path)) return true;
  sys::fs::remove(temporary);
  return false;
}

// The least recently used entries go first, until the rest fit in maxBytes.
void DecompressedDebugCache::evictBeyondLimit() const {
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(join({dir_, ".inflated"}), ec), end; it != end && !ec;
       it.increment(ec)) {
    auto status = it->status();
    if (!status || status->type() != sys::fs::file_type::regular_file) continue;
    entries.push_back({it->path(), status->getSize(), status->getLastModificationTime()});
    total += status->getSize();
  }
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= maxBytes_) break;
    if (!sys::fs::remove(entry.path)) total -= entry.size;
  }
}

} // namespace stackwalk
