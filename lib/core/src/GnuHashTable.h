// A 64-bit ELF file's GNU hash table (.gnu.hash), read as the dynamic loader
// reads it, to find a dynamic symbol by name without reading every name.
// LLVM gives the table's typed view (Elf_GnuHash_Impl) and the hash function
// (object::hashGnu), not a lookup: that is here. Every index the file gives is
// checked before it is used; a table that does not fit its file or its symbol
// table is not found, and callers scan the symbols instead. (LoadedElf walks
// the same table in a dump's memory, read a word at a time where the dump
// holds it, with no file section to view.)
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ELF.h"

#include <cstdint>
#include <optional>

namespace stackwalk {

class GnuHashTable {
public:
  using ELFT = llvm::object::ELF64LE;

  // The table whose sh_link names `dynsym` (a section of `sections`), of
  // `symbolCount` symbols; nullopt when there is none or it is malformed.
  static std::optional<GnuHashTable> forSymbols(const llvm::object::ELFFile<ELFT> &file,
                                                llvm::ArrayRef<ELFT::Shdr> sections, const ELFT::Shdr &dynsym,
                                                size_t symbolCount);

  // The first symbol of `name`'s hash chain, in table order, that `accept`
  // takes (it compares the name, and whatever else the caller requires);
  // nullopt when none does. Symbols the table leaves out (those before its
  // first hashed one: undefined and local symbols) are never offered.
  std::optional<uint32_t> find(llvm::StringRef name, llvm::function_ref<bool(uint32_t index)> accept) const;

private:
  GnuHashTable(const ELFT::GnuHash &table, size_t symbolCount) : table_(&table), symbolCount_(symbolCount) {}
  bool mayHold(uint32_t hash) const;

  const ELFT::GnuHash *table_;
  size_t symbolCount_;
};

} // namespace stackwalk
