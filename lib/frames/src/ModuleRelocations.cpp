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

} // namespace

// RELA relocations exist on 64-bit machines (x86-64, arm64): read as the
// file's typed arrays, which LLVM's generic RelocationRef made a tenth of a
// small .NET walk by looking sections and symbols up again for each one.
ModuleRelocations::ModuleRelocations(const Module &module) : module_(module) {
  if (!module.image) return;
  const auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(&module.image->object());
  if (!elf) return;
  const llvm::object::ELFFile<Elf> &file = elf->getELFFile();
  uint16_t machine = file.getHeader().e_machine;
  uint64_t bias = module.loadBias();
  auto sections = file.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return;
  }
  for (const Elf::Shdr &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_RELA) continue; // REL keeps the addend in place: the file already has it
    auto relocations = file.relas(section);
    if (!relocations) {
      llvm::consumeError(relocations.takeError());
      continue;
    }
    llvm::ArrayRef<Elf::Sym> symbols;
    bool symbolsRead = false;
    for (const Elf::Rela &relocation : *relocations) {
      uint32_t type = relocation.getType(/*isMips64EL=*/false);
      uint64_t value;
      if (isRelative(type, machine)) {
        value = bias + uint64_t(relocation.r_addend);
      } else if (isAbsolute(type, machine)) {
        if (!symbolsRead) symbols = linkedSymbols(file, section), symbolsRead = true;
        uint32_t index = relocation.getSymbol(/*isMips64EL=*/false);
        if (index == 0 || index >= symbols.size() || symbols[index].st_shndx == llvm::ELF::SHN_UNDEF) continue;
        value = bias + symbols[index].st_value + uint64_t(relocation.r_addend);
      } else {
        continue;
      }
      elfValues_.emplace_back(bias + relocation.r_offset, value);
    }
  }
  // Kept in file order among equals: the last relocation of an address is
  // what the loader leaves there. Linkers write them sorted (libcoreclr's
  // 19,000): then checking is all the sorting needed.
  auto byAddress = [](const auto &a, const auto &b) { return a.first < b.first; };
  if (!std::is_sorted(elfValues_.begin(), elfValues_.end(), byAddress))
    std::stable_sort(elfValues_.begin(), elfValues_.end(), byAddress);
}

std::optional<uint64_t> ModuleRelocations::pointerAt(uint64_t address, unsigned pointerSize) const {
  if (!module_.image || !module_.contains(address)) return std::nullopt;
  if (module_.image->isElf())
    if (auto after = std::upper_bound(elfValues_.begin(), elfValues_.end(), address,
                                      [](uint64_t a, const auto &entry) { return a < entry.first; });
        after != elfValues_.begin() && std::prev(after)->first == address)
      return std::prev(after)->second;
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
