// The pointer values a module's loader would have written: for reading
// pointers out of a module file when the dump left their pages out. An ELF
// shared object keeps such pointers as dynamic relocations (RELA: the file
// holds 0, the value is the load bias plus the addend); a PE image holds the
// value for its preferred base, moved by base relocations.
#pragma once

#include "stackwalk/core/Module.h"

#include "llvm/Object/ELFTypes.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace stackwalk::frames {

class ModuleRelocations {
public:
  explicit ModuleRelocations(const Module &module);

  // The pointer at `address` (a process address inside the module) as the
  // process had it after relocation, or nullopt when the file cannot say.
  std::optional<uint64_t> pointerAt(uint64_t address, unsigned pointerSize) const;

private:
  using Elf = llvm::object::ELF64LE;
  // A relocated value, and the relocation's place among all of the module's
  // in file order: the loader applies them in that order, so the last one
  // of an address is what it leaves there.
  struct Value {
    uint64_t value, order;
  };
  std::optional<Value> elfValueAt(uint64_t address) const;
  std::optional<Value> valueOf(const Elf::Rela &relocation, llvm::ArrayRef<Elf::Sym> symbols, uint64_t order) const;

  const Module &module_;
  uint16_t machine_ = 0;
  // The longest run of relocations sorted by address, searched where the file
  // holds it: linkers write the RELATIVE ones first, sorted (18,644 of
  // libcoreclr's 19,135), and copying them was a tenth of a small .NET walk.
  llvm::ArrayRef<Elf::Rela> run_;
  llvm::ArrayRef<Elf::Sym> runSymbols_;
  uint64_t runOrder_ = 0;
  // The others' values by process address (among equals, in file order).
  std::vector<std::pair<uint64_t, Value>> others_;
};

} // namespace stackwalk::frames
