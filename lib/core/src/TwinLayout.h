// How a debug file's twin (DebugSectionTwin.h) is laid out and filled: shared
// by the twin made at once and the one made on other threads while a walk
// goes on (PrefetchedTwin.h).
#pragma once

#include "stackwalk/core/DebugSectionTwin.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk {

class ModuleImage;

// A section of the twin: where its bytes come from, and where they go.
struct TwinSection {
  llvm::StringRef name;
  llvm::StringRef stream; // the file's bytes past the compression header when compressed, else all of them
  uint32_t compression;   // ELF::ELFCOMPRESS_ZLIB or _ZSTD when compressed
  uint64_t flags, entrySize;
  uint64_t size;   // decompressed
  uint64_t offset; // in the twin
  bool compressed;
};

// The twin's sections, back to back after an ELF header, then their names and
// the section table (null, the sections, the names).
class TwinLayout {
public:
  // An error when the file is not a linked little-endian ELF file with a
  // compressed section, or its sections claim more than maxDebugBytes.
  static llvm::Expected<TwinLayout> of(const ModuleImage &file, uint64_t maxDebugBytes, TwinSections which);

  const std::vector<TwinSection> &sections() const { return sections_; }
  // The twin's bytes, headers and table included.
  uint64_t size() const { return tableOffset_ + tableBytes(); }
  // Writes the twin's ELF header, section names and table into `twin`
  // (size() bytes), around its sections.
  void writeTables(llvm::MutableArrayRef<uint8_t> twin) const;
  // How many bytes before the twin a view of it needs for its own ELF
  // header, names and table (writeViewTables).
  uint64_t viewTablesSize() const;
  // Writes into `lead` (viewTablesSize() bytes or more, right before the twin
  // in memory) the tables of an ELF file that starts there, holds the twin's
  // sections where they are, and whose section `cut` holds only its first
  // `cutSize` bytes.
  void writeViewTables(llvm::MutableArrayRef<uint8_t> lead, size_t cut, uint64_t cutSize) const;

private:
  uint64_t tableBytes() const;
  // The header, names and table, for sections `sectionBase` bytes after the header's start.
  void writeHeaderAndTable(llvm::MutableArrayRef<uint8_t> out, uint64_t namesOffset, uint64_t sectionBase, size_t cut,
                           uint64_t cutSize) const;
  template <class ELFT>
  void writeHeaderAndTableAs(llvm::MutableArrayRef<uint8_t> out, uint64_t namesOffset, uint64_t sectionBase,
                             size_t cut, uint64_t cutSize) const;

  std::vector<TwinSection> sections_;
  std::string names_;
  uint64_t contentsEnd_ = 0, tableOffset_ = 0;
  bool is64_ = true;
  uint8_t ident_[16] = {};
  uint16_t type_ = 0, machine_ = 0;
};

// Decompresses or copies one section of `file` into its place in `twin`,
// then lets the kernel drop the compressed bytes' file pages, which nothing
// reads again (so the peak holds the twin and what is still to read, not all
// of both).
llvm::Error fillSection(const ModuleImage &file, const TwinSection &section, llvm::MutableArrayRef<uint8_t> twin);

// Uninitialized memory for a twin, in transparent huge pages where the
// system gives them on request (Debian's default, "madvise"): 2 MiB per page
// fault. Mapped here from a 2 MiB boundary, because memory from the allocator
// (LLVM's getNewUninitMemBuffer) starts anywhere, and its first 2 MiB on
// average were 4 KiB pages: 500 page faults, at about 10 us each in the
// Firecracker VMs CI runs on (a fifth of a cold .NET walk's page faults). Its
// end is not rounded up to a huge page: that held 2.3 MiB more at the peak of
// a small walk, for a millisecond. `lead` bytes before it are mapped too, in
// small pages, for a view's tables (TwinLayout::writeViewTables).
class TwinBuffer : public llvm::WritableMemoryBuffer {
public:
  static std::unique_ptr<TwinBuffer> make(size_t size, size_t lead, const std::string &name);
  ~TwinBuffer() override;
  llvm::StringRef getBufferIdentifier() const override { return name_; }
  // Anonymous memory, which MADV_DONTNEED would zero, unlike a file's pages (ModuleImage::releaseCompressedPages).
  BufferKind getBufferKind() const override { return MemoryBuffer_Malloc; }
  llvm::MutableArrayRef<uint8_t> bytes() {
    return {reinterpret_cast<uint8_t *>(getBufferStart()), getBufferSize()};
  }
  llvm::MutableArrayRef<uint8_t> leadBytes() { return {reinterpret_cast<uint8_t *>(getBufferStart()) - lead_, lead_}; }

private:
  TwinBuffer(char *start, size_t size, size_t lead, size_t mapped, std::string name);
  size_t lead_, mapped_;
  std::string name_;
};

} // namespace stackwalk
