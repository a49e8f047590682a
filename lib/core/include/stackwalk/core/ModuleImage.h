// A module's file (or its in-memory copy), mapped and parsed on first use.
//
// An image knows its own virtual addresses ("file addresses"); a Module places
// it in the process with a load bias. The image also carries its separate debug
// file when one was found, because symbols and .debug_frame may live there.
#pragma once

#include "stackwalk/core/ElfSymbolTable.h"
#include "stackwalk/core/Memory.h"
#include "stackwalk/core/PltStubs.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llvm::object {
class COFFObjectFile;
}

namespace stackwalk {

struct LoadSegment {
  uint64_t vaddr, memSize, fileOffset, fileSize;
  bool executable;
};

class ModuleImage {
public:
  // Maps a file from disk; fails if it is not an object file LLVM can read.
  static llvm::Expected<std::unique_ptr<ModuleImage>> open(const std::string &path);
  // The same for a file already read (readRegularFile), or made in memory
  // as a file is (a decompressed debug file).
  static llvm::Expected<std::unique_ptr<ModuleImage>> fromFileBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                                                     const std::string &path);
  // Wraps bytes copied from the dump (the vDSO, or a module whose file is missing).
  static llvm::Expected<std::unique_ptr<ModuleImage>>
  fromBytes(std::vector<uint8_t> bytes, const std::string &name);
  // Copies up to maxSize bytes at an address (fewer where the memory ends) and
  // wraps them: for images that exist only in the process, like the vDSO.
  static llvm::Expected<std::unique_ptr<ModuleImage>> fromMemory(const MemorySource &memory, uint64_t address,
                                                                 uint64_t maxSize, const std::string &name);
  // A 64-bit PE image the loader mapped at `base`, rebuilt in file layout from
  // memory (full-memory minidumps): fails unless the headers and every section
  // are in the dump, and when the file would take more than maxBytes (or 256 MiB).
  static llvm::Expected<std::unique_ptr<ModuleImage>> fromLoadedPe(const MemorySource &memory, uint64_t base,
                                                                   const std::string &name,
                                                                   uint64_t maxBytes = UINT64_MAX);
  // A 64-bit ELF image the loader mapped at `base` (its lowest mapping),
  // rebuilt in file layout from memory (full cores): its segments, dynamic
  // symbols and .eh_frame, with section headers of its own; fails unless the
  // headers and every PT_LOAD segment's file bytes are in the dump, and when
  // the file would take more than maxBytes (or 256 MiB).
  static llvm::Expected<std::unique_ptr<ModuleImage>> fromLoadedElf(const MemorySource &memory, uint64_t base,
                                                                    const std::string &name,
                                                                    uint64_t maxBytes = UINT64_MAX);

  const std::string &path() const { return path_; }
  // True for an image copied from the dump (the vDSO), which has no file.
  bool inMemory() const { return !ownedBytes_.empty(); }
  // Such an image's bytes: all there is to it.
  llvm::ArrayRef<uint8_t> memoryBytes() const { return ownedBytes_; }
  const llvm::object::ObjectFile &object() const { return *object_; }
  bool isElf() const;

  // The ELF GNU build-id, empty when there is none.
  const std::vector<uint8_t> &buildId() const { return buildId_; }
  // Breakpad's and Crashpad's identifier of an ELF file, the GUID of the
  // CodeView record they write for it: the build-id's first 16 bytes (zero
  // padded), or without a build-id the first page of .text folded by XOR
  // into 16 bytes (Breakpad's FileID). nullopt for other images, or an ELF
  // file with neither.
  std::optional<std::array<uint8_t, 16>> breakpadFileId() const;
  // A PE image's TimeDateStamp and SizeOfImage, its identity in minidumps
  // and symbol stores.
  struct PeIdentity {
    uint32_t timeDateStamp, sizeOfImage;
  };
  const std::optional<PeIdentity> &peIdentity() const { return peIdentity_; }
  // Where the image expects to load: ELF's lowest PT_LOAD vaddr (page-aligned),
  // PE's ImageBase. The module base minus this is the load bias.
  uint64_t preferredBase() const { return preferredBase_; }
  const std::vector<LoadSegment> &segments() const { return segments_; }

  // Reads bytes at a file virtual address from the loadable segments.
  bool readAtFileAddress(uint64_t vaddr, std::span<uint8_t> out) const;
  // Reads the file's bytes at an offset (an image mapped flat, as a file).
  bool readAtFileOffset(uint64_t offset, std::span<uint8_t> out) const;

  // A section's contents and file address, by name (".eh_frame", ...).
  struct Section {
    llvm::StringRef data;
    uint64_t address = 0;
    bool compressed = false; // SHF_COMPRESSED: data is the header and the stream
  };
  std::optional<Section> section(llvm::StringRef name) const;

  // A PE image's CodeView record: the PDB it was linked with.
  struct PdbReference {
    std::string name; // file name, without the directories it was built in
    std::string debugId;
  };
  std::optional<PdbReference> pdbReference() const;
  // The PDB file the resolver found for it, empty when none.
  const std::string &pdbPath() const { return pdbPath_; }
  void setPdbPath(std::string path) { pdbPath_ = std::move(path); }

  // The file address of a symbol (.symtab or .dynsym; a PE's symbols or exports), by name.
  std::optional<uint64_t> symbolAddress(llvm::StringRef name) const;
  // Whether a symbol of that name lies at that file address: for an ELF
  // file, its symbols at the address are compared by name (no index of
  // every name is built, as symbolAddress's is after a few lookups).
  bool hasSymbolAt(llvm::StringRef name, uint64_t fileAddress) const;

  // .gnu_debuglink: the debug file's name and CRC.
  std::optional<std::pair<std::string, uint32_t>> debugLink() const;

  // The separate debug file, when the resolver found one.
  const ModuleImage *debugImage() const { return debug_.get(); }
  void setDebugImage(std::unique_ptr<ModuleImage> debug) { debug_ = std::move(debug); }
  bool hasDwarf() const;
  // The bytes of DWARF that reading this image's debug sections would take in
  // memory: compressed sections count at their uncompressed size.
  uint64_t debugInfoBytes() const;
  // False when an ELF symbol table is malformed: LLVM's symbol-size code
  // aborts the process on such tables (report_fatal_error), so they are not
  // handed to it.
  bool symbolTablesUsable() const { return symbolTablesUsable_; }
  // False when a relocatable object's relocation sections are malformed:
  // LLVM's DWARFContext, which applies them, aborts the process on such
  // sections (debugRelocationsWellFormed in ModuleImage.cpp).
  bool debugRelocationsUsable() const { return debugRelocationsUsable_; }
  // Drops the file pages of SHF_COMPRESSED sections from memory (they are
  // read again from the file if ever needed): once LLVM has decompressed
  // them, keeping both copies costs megabytes per module.
  void releaseCompressedPages() const;
  // The same for the whole pages of `bytes`, a range of this file's contents
  // (a section inflated into a twin); nothing where the file is not mapped.
  void releaseFilePages(llvm::StringRef bytes) const;
  bool hasSymbolTable() const;
  // The image whose symbol table names its code: a separate debug file's full
  // .symtab, where the image itself may only have .dynsym; else the image.
  const ModuleImage &symbolImage() const { return debug_ && debug_->hasSymbolTable() ? *debug_ : *this; }
  // This file's ELF symbols as ElfSymbolTable reads them, read on the first
  // call and shared by the Symbolizer and the unwinders that need a
  // function's start; null where that reading does not apply (not a linked
  // ELF file it reads, or malformed symbol tables).
  std::shared_ptr<const ElfSymbolTable> elfSymbols() const;
  // This file's PLT stubs, read on the first call (empty for a file that has
  // none with contents, as a separate debug file).
  const PltStubs &pltStubs() const;
  // Where its names come from, as reports say it: "pdb", "dwarf" (its own or
  // its debug file's), "symtab", or "dynsym" (exports only).
  std::string_view symbolSource() const;
  // The file debug info is read from besides the image: its PDB or its
  // separate debug file; empty when none.
  const std::string &debugInfoPath() const;

private:
  ModuleImage() = default;
  llvm::Error parse();
  std::optional<uint64_t> exportAddress(const llvm::object::COFFObjectFile &coff, llvm::StringRef name) const;

  std::string path_;
  std::unique_ptr<llvm::MemoryBuffer> buffer_;
  std::vector<uint8_t> ownedBytes_;
  std::unique_ptr<llvm::object::ObjectFile> object_;
  std::vector<uint8_t> buildId_;
  std::optional<PeIdentity> peIdentity_;
  bool symbolTablesUsable_ = true, debugRelocationsUsable_ = true;
  // Symbol name -> file address, .symtab before .dynsym, built on the first
  // lookup: a dump may give thousands of modules one file, and each module
  // asks for the same few names.
  mutable std::unique_ptr<llvm::DenseMap<llvm::StringRef, uint64_t>> symbolIndex_;
  mutable unsigned scannedLookups_ = 0; // names looked up without the index
  mutable std::unique_ptr<llvm::StringMap<llvm::object::SectionRef>> sectionsByName_;
  mutable std::optional<std::shared_ptr<const ElfSymbolTable>> elfSymbols_;
  mutable std::unique_ptr<const PltStubs> pltStubs_;
  uint64_t preferredBase_ = 0;
  std::vector<LoadSegment> segments_;
  std::unique_ptr<ModuleImage> debug_;
  std::string pdbPath_;
};

// Lower-case hex of bytes, as build-ids are written.
std::string hexString(std::span<const uint8_t> bytes);

// A PDB's identity as symbol stores spell it: the GUID's fields in upper-case
// hex (Data1, Data2, Data3 as numbers, then Data4's bytes), then the age.
std::string pdbDebugId(std::span<const uint8_t, 16> guid, uint32_t age);

} // namespace stackwalk
