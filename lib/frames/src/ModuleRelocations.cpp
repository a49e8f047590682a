#include "ModuleRelocations.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"

namespace stackwalk::frames {
namespace {

// Relocations that set a pointer to an address inside the module itself:
// RELATIVE (bias + addend), and symbol-based ones whose symbol the module
// defines (bias + symbol value + addend). Others point into other modules.
bool isRelative(uint64_t type, uint16_t machine) {
  if (machine == llvm::ELF::EM_X86_64) return type == llvm::ELF::R_X86_64_RELATIVE;
  if (machine == llvm::ELF::EM_AARCH64) return type == llvm::ELF::R_AARCH64_RELATIVE;
  if (machine == llvm::ELF::EM_386) return type == llvm::ELF::R_386_RELATIVE;
  return false;
}

bool isAbsolute(uint64_t type, uint16_t machine) {
  if (machine == llvm::ELF::EM_X86_64) return type == llvm::ELF::R_X86_64_64 || type == llvm::ELF::R_X86_64_GLOB_DAT;
  if (machine == llvm::ELF::EM_AARCH64) return type == llvm::ELF::R_AARCH64_ABS64 || type == llvm::ELF::R_AARCH64_GLOB_DAT;
  return false;
}

} // namespace

ModuleRelocations::ModuleRelocations(const Module &module) : module_(module) {
  if (!module.image) return;
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&module.image->object());
  if (!elf) return;
  uint16_t machine = elf->getEMachine();
  uint64_t bias = module.loadBias();
  for (const llvm::object::SectionRef &section : elf->sections()) {
    uint32_t type = llvm::object::ELFSectionRef(section).getType();
    if (type != llvm::ELF::SHT_RELA) continue; // REL keeps the addend in place: the file already has it
    for (const llvm::object::RelocationRef &reloc : section.relocations()) {
      llvm::object::ELFRelocationRef elfReloc(reloc);
      auto addend = elfReloc.getAddend();
      if (!addend) {
        llvm::consumeError(addend.takeError());
        continue;
      }
      uint64_t relocType = reloc.getType();
      uint64_t value;
      if (isRelative(relocType, machine)) {
        value = bias + uint64_t(*addend);
      } else if (isAbsolute(relocType, machine)) {
        auto symbol = reloc.getSymbol();
        if (symbol == elf->symbol_end()) continue;
        auto symbolValue = symbol->getValue();
        auto flags = symbol->getFlags();
        if (!symbolValue || !flags || (*flags & llvm::object::SymbolRef::SF_Undefined)) {
          if (!symbolValue) llvm::consumeError(symbolValue.takeError());
          if (!flags) llvm::consumeError(flags.takeError());
          continue;
        }
        value = bias + *symbolValue + uint64_t(*addend);
      } else {
        continue;
      }
      elfValues_[bias + reloc.getOffset()] = value;
    }
  }
}

std::optional<uint64_t> ModuleRelocations::pointerAt(uint64_t address, unsigned pointerSize) const {
  if (!module_.image || !module_.contains(address)) return std::nullopt;
  if (module_.image->isElf())
    if (auto it = elfValues_.find(address); it != elfValues_.end()) return it->second;
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
