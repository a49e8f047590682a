#include "FunctionStart.h"

#include "stackwalk/core/ElfSymbolTable.h"
#include "stackwalk/core/Module.h"

namespace stackwalk {
namespace {

bool isColdPart(llvm::StringRef name) { return name.ends_with(".cold") || name.contains(".cold."); }

} // namespace

std::optional<uint64_t> functionStart(const Target &target, uint64_t address) {
  const Module *module = target.moduleAt(address);
  if (!module || !module->image || !module->image->isElf()) return std::nullopt;
  auto symbols = module->image->symbolImage().elfSymbols();
  if (!symbols) return std::nullopt;
  auto symbol = symbols->at(address - module->loadBias());
  if (!symbol || !symbol->function || isColdPart(symbol->name)) return std::nullopt;
  // A symbol without a size runs to the next one only in a full symbol table:
  // .dynsym lacks the hidden functions after it (musl's memset, before __clone).
  if (symbol->size == 0 && !module->image->symbolImage().hasSymbolTable()) return std::nullopt;
  return symbol->start + module->loadBias();
}

} // namespace stackwalk
