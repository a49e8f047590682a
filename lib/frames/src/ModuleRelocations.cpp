#include "ModuleRelocations.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"

#include <algorithm>

namespace stackwalk::frames {
namespace {

using Elf = llvm::object::ELF64LE;

// Relocations that set a pointer to an address inside the module itself:
// RELATIVE (bias + addend), and symbol-based ones whose symbol the module
// defines (bias + symbol value + addend). Others point into other modules.
bool isRelative(uint32_t type, uint16_t machine) {
  if (machine == llvm::ELF::EM_X86_64) return type == llvm::ELF::R_X86_64_RELATIVE;
  if (machine == llvm::ELF::EM_AARCH64) return type == llvm::ELF::R_AARCH64_RELATIVE;
  return false;
}

bool isAbsolute(uint32_t type, uint16_t machine) {
  if (machine == llvm::ELF::EM_X86_64) return type == llvm::ELF::R_X86_64_64 || type == llvm::ELF::R_X86_64_GLOB_DAT;
  if (machine == llvm::ELF::EM_AARCH64) return type == llvm::ELF::R_AARCH64_ABS64 || type == llvm::ELF::R_AARCH64_GLOB_DAT;
  return false;
}

// The symbols a relocation section refers to (its sh_link), empty when unreadable.
llvm::ArrayRef<Elf::Sym> linkedSymbols(const llvm::object::ELFFile<Elf> &file, const Elf::Shdr &relocations) {
  auto table = file.getSection(relocations.sh_link);
  if (!table) {
    llvm::consumeError(table.takeError());
    return {};
  }
  auto symbols = file.symbols(*table);
  if (!symbols) {
    llvm::consumeError(symbols.takeError());
    return {};
  }
  return *symbols;
}

struct RelocationTable {
  llvm::ArrayRef<Elf::Rela> relocations;
  llvm::ArrayRef<Elf::Sym> symbols;
  uint64_t order; // of its first relocation among the module's
};

// The module's RELA sections, in file order. REL ones keep the addend in
// place: the file already holds their values.
std::vector<RelocationTable> relocationTables(const llvm::object::ELFFile<Elf> &file) {
  std::vector<RelocationTable> tables;
  auto sections = file.sections();
  if (!sections) return llvm::consumeError(sections.takeError()), tables;
  uint64_t order = 0;
  for (const Elf::Shdr &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_RELA) continue;
    auto relocations = file.relas(section);
    if (!relocations) {
      llvm::consumeError(relocations.takeError());
      continue;
    }
    tables.push_back({*relocations, linkedSymbols(file, section), order});
    order += relocations->size();
  }
  return tables;
}

// Where the longest run sorted by r_offset lies: (table, first, end).
std::tuple<size_t, size_t, size_t> longestSortedRun(const std::vector<RelocationTable> &tables) {
  std::tuple<size_t, size_t, size_t> longest{0, 0, 0};
  for (size_t table = 0; table < tables.size(); ++table) {
    llvm::ArrayRef<Elf::Rela> relocations = tables[table].relocations;
    for (size_t first = 0, end = 1; first < relocations.size(); first = end++) {
      while (end < relocations.size() && relocations[end - 1].r_offset <= relocations[end].r_offset) ++end;
      auto [longestTable, longestFirst, longestEnd] = longest;
      if (end - first > longestEnd - longestFirst) longest = {table, first, end};
    }
  }
  return longest;
}

} // namespace

ModuleRelocations::ModuleRelocations(const Module &module) : module_(module) {
  if (!module.image) return;
  const auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(&module.image->object());
  if (!elf) return;
  const llvm::object::ELFFile<Elf> &file = elf->getELFFile();
  machine_ = file.getHeader().e_machine;
  std::vector<RelocationTable> tables = relocationTables(file);
  auto [runTable, runFirst, runEnd] = longestSortedRun(tables);
  if (runEnd > runFirst) {
    run_ = tables[runTable].relocations.slice(runFirst, runEnd - runFirst);
    runSymbols_ = tables[runTable].symbols;
    runOrder_ = tables[runTable].order + runFirst;
  }
  for (size_t table = 0; table < tables.size(); ++table)
    for (size_t index = 0; index < tables[table].relocations.size(); ++index) {
      if (table == runTable && index >= runFirst && index < runEnd) continue; // searched in place
      const Elf::Rela &relocation = tables[table].relocations[index];
      if (auto value = valueOf(relocation, tables[table].symbols, tables[table].order + index))
        others_.emplace_back(module.loadBias() + relocation.r_offset, *value);
    }
  auto byAddress = [](const auto &a, const auto &b) { return a.first < b.first; };
  if (!std::is_sorted(others_.begin(), others_.end(), byAddress))
    std::stable_sort(others_.begin(), others_.end(), byAddress);
}

std::optional<ModuleRelocations::Value> ModuleRelocations::valueOf(const Elf::Rela &relocation,
                                                                   llvm::ArrayRef<Elf::Sym> symbols,
                                                                   uint64_t order) const {
  uint32_t type = relocation.getType(/*isMips64EL=*/false);
  uint64_t bias = module_.loadBias();
  if (isRelative(type, machine_)) return Value{bias + uint64_t(relocation.r_addend), order};
  if (!isAbsolute(type, machine_)) return std::nullopt;
  uint32_t index = relocation.getSymbol(/*isMips64EL=*/false);
  if (index == 0 || index >= symbols.size() || symbols[index].st_shndx == llvm::ELF::SHN_UNDEF) return std::nullopt;
  return Value{bias + symbols[index].st_value + uint64_t(relocation.r_addend), order};
}

// The last relocation of the address that sets a value, in the run or among
// the others, whichever comes later in the file.
std::optional<ModuleRelocations::Value> ModuleRelocations::elfValueAt(uint64_t address) const {
  std::optional<Value> found;
  uint64_t offset = address - module_.loadBias();
  auto first = std::partition_point(run_.begin(), run_.end(), [&](const Elf::Rela &r) { return r.r_offset < offset; });
  auto end = std::partition_point(first, run_.end(), [&](const Elf::Rela &r) { return r.r_offset == offset; });
  for (auto relocation = end; relocation != first && !found;) {
    --relocation;
    found = valueOf(*relocation, runSymbols_, runOrder_ + uint64_t(relocation - run_.begin()));
  }
  auto after = std::upper_bound(others_.begin(), others_.end(), address,
                                [](uint64_t a, const auto &entry) { return a < entry.first; });
  if (after != others_.begin() && std::prev(after)->first == address &&
      (!found || std::prev(after)->second.order > found->order))
    found = std::prev(after)->second;
  return found;
}

std::optional<uint64_t> ModuleRelocations::pointerAt(uint64_t address, unsigned pointerSize) const {
  if (!module_.image || !module_.contains(address)) return std::nullopt;
  if (module_.image->isElf())
    if (auto relocated = elfValueAt(address)) return relocated->value;
  std::vector<uint8_t> bytes(pointerSize);
  if (!module_.image->readAtFileAddress(address - module_.loadBias(), bytes)) return std::nullopt;
  uint64_t value = 0;
  for (unsigned i = pointerSize; i-- > 0;) value = (value << 8) | bytes[i];
  // ELF: a slot no relocation names holds its final value in the file. PE:
  // the file holds pointers for the preferred base, and base relocations
  // move every one of them by the same delta.
  if (module_.image->isElf() || value == 0) return value;
  return value + module_.loadBias();
}

} // namespace stackwalk::frames
