// An ELF shared object as the loader mapped it, read from a process's memory:
// its program headers, its dynamic section, and its dynamic symbols through
// the loader's own hash tables (DT_GNU_HASH, else DT_HASH). For a module whose
// file is absent from a dump that holds its pages (a full core), where the
// .NET runtime's DotNetRuntimeContractDescriptor export is still found.
// LLVM's ELFFile reads files in file layout; a loaded image is in memory
// layout, with no section headers, so this view is ours. Little-endian ELF32
// (i386, ARM) and ELF64; a 32-bit image's header, program headers and symbols
// are given widened to their 64-bit forms.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class LoadedElf {
public:
  // The image whose ELF header is at `base` (the module's lowest mapping).
  static llvm::Expected<LoadedElf> read(const MemorySource &memory, uint64_t base);

  // Runtime address minus file virtual address.
  uint64_t bias() const { return bias_; }
  // The runtime address of a dynamic symbol defined by the image.
  llvm::Expected<uint64_t> symbolAddress(llvm::StringRef name) const;

  // A defined function among the dynamic symbols, at its runtime address.
  struct Function {
    uint64_t start, size;
    std::string name;
  };
  // Every defined function with a size, by address: what names an image-less
  // module's exported code. Each symbol entry read takes one of `budget`
  // (shared by a dump's modules: a dump's claims must not size the work).
  std::vector<Function> functions(uint64_t &budget) const;

  // ELFCLASS64, or ELFCLASS32: the size of its words and structures.
  bool is64() const { return is64_; }
  // PT_DYNAMIC: absent from a statically linked executable that is not
  // position-independent, which has no dynamic symbols.
  bool hasDynamicSection() const { return hasDynamicSection_; }
  // The ELF header and program headers as the dump holds them (widened), and
  // their bytes as they are, to be written back.
  const llvm::ELF::Elf64_Ehdr &header() const { return header_; }
  const std::vector<llvm::ELF::Elf64_Phdr> &programHeaders() const { return programHeaders_; }
  const std::vector<uint8_t> &headerBytes() const { return headerBytes_; }
  const std::vector<uint8_t> &programHeaderBytes() const { return programHeaderBytes_; }
  // The dynamic symbol table and its strings, at runtime addresses, with the
  // number of entries its hash table implies: what a file rebuilt from the
  // loaded image lists as .dynsym and .dynstr.
  struct DynamicSymbols {
    uint64_t table, count, strings, stringsSize;
  };
  std::optional<DynamicSymbols> dynamicSymbols() const;

private:
  LoadedElf(const MemorySource &memory, uint64_t base, bool is64) : memory_(&memory), base_(base), is64_(is64) {}
  template <class ELFT> static llvm::Expected<LoadedElf> readAs(const MemorySource &memory, uint64_t base);
  template <class ELFT> llvm::Error readDynamic(uint64_t address, uint64_t size);
  // The size of the image's words (the GNU hash table's bloom filter's, say).
  unsigned wordSize() const { return is64_ ? 8 : 4; }
  // The dynamic symbol at `index` of the table at `symtab`, widened.
  std::optional<llvm::ELF::Elf64_Sym> symbolAt(uint64_t symtab, uint64_t index) const;
  // A dynamic entry's address as a runtime address: glibc's loader rewrites
  // DT_SYMTAB and its kind in place (adds the bias), other loaders do not.
  std::optional<uint64_t> dynamicAddress(int64_t tag) const;
  std::optional<uint64_t> gnuHashLookup(uint64_t table, uint64_t symtab, uint64_t strtab, llvm::StringRef name) const;
  std::optional<uint64_t> sysvHashLookup(uint64_t table, uint64_t symtab, uint64_t strtab, llvm::StringRef name) const;
  // The symbol at `index` when it is `name` and defined: its runtime address.
  // How many entries the dynamic symbol table has, from its hash table.
  std::optional<uint64_t> symbolCount() const;
  std::string symbolName(uint64_t address) const;
  std::optional<uint64_t> matchSymbol(uint64_t symtab, uint64_t strtab, uint64_t index, llvm::StringRef name) const;

  const MemorySource *memory_;
  uint64_t base_;
  bool is64_;
  uint64_t bias_ = 0;
  uint64_t extent_ = 0; // the loaded image's size, from its PT_LOAD segments
  llvm::ELF::Elf64_Ehdr header_{};
  std::vector<llvm::ELF::Elf64_Phdr> programHeaders_;
  std::vector<uint8_t> headerBytes_, programHeaderBytes_;
  bool hasDynamicSection_ = false;
  std::map<int64_t, uint64_t> dynamic_; // the first entry of each tag
};

} // namespace stackwalk
