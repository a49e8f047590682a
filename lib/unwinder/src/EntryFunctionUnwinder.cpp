#include "stackwalk/unwinder/EntryFunctionUnwinder.h"

#include "stackwalk/core/Auxv.h"
#include "stackwalk/core/BreakpadSymbolFile.h"

#include "llvm/Object/ELFObjectFile.h"

namespace stackwalk {
namespace {

// The function at the ELF entry point, by its symbol (.symtab, else
// .dynsym): its size, or where the next symbol starts when it has none
// (older glibc's _start), as gdb bounds a minimal symbol.
std::optional<std::pair<uint64_t, uint64_t>> entryFunctionOf(const ModuleImage &image) {
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&image.object());
  if (!elf || !image.symbolTablesUsable()) return std::nullopt;
  llvm::Expected<uint64_t> entry = elf->getStartAddress();
  if (!entry) {
    llvm::consumeError(entry.takeError());
    return std::nullopt;
  }
  // ARM's entry point has the Thumb bit where its code is Thumb; LLVM gives
  // the symbol's address without it.
  if (elf->getEMachine() == llvm::ELF::EM_ARM) *entry &= ~uint64_t(1);
  bool named = false;
  uint64_t size = 0, next = UINT64_MAX;
  for (auto symbols : {elf->symbols(), elf->getDynamicSymbolIterators()})
    for (const llvm::object::ELFSymbolRef symbol : symbols) {
      llvm::Expected<uint64_t> address = symbol.getAddress();
      if (!address) {
        llvm::consumeError(address.takeError());
        continue;
      }
      if (*address == *entry) {
        named = true;
        size = std::max(size, symbol.getSize());
      } else if (*address > *entry && symbol.getELFType() == llvm::ELF::STT_FUNC) {
        next = std::min(next, *address);
      }
    }
  if (!named || (size == 0 && next == UINT64_MAX)) return std::nullopt;
  return std::pair(*entry, size ? size : next - *entry);
}

// Whether the function a module's symbol file names at the frame starts at
// the process's entry point.
bool startsAtEntryBySymbolFile(const Frame &frame, const Target &target) {
  const Module &module = *frame.module;
  std::optional<uint64_t> entry = auxvValue(target.process.auxv, AT_ENTRY);
  if (!module.symbolFile || !entry || !module.contains(*entry)) return false;
  std::vector<SourceFrame> frames = module.symbolFile->frames(frame.lookupAddress() - module.base);
  return !frames.empty() && frames.back().functionStart == *entry - module.base;
}

} // namespace

UnwindResult EntryFunctionUnwinder::unwind(const Frame &frame, const Target &target) {
  const Module *module = frame.module;
  if (module && !module->image && startsAtEntryBySymbolFile(frame, target))
    return UnwindResult::endOfStack("the program's entry function (at the entry point the dump records) is the "
                                    "outermost frame");
  if (!module || !module->isMainExecutable || !module->image)
    return UnwindResult::noInfo(""); // not the entry function
  auto [cached, inserted] = entryFunctions_.try_emplace(module->image.get());
  if (inserted)
    if (auto found = entryFunctionOf(*module->image)) cached->second = Range{found->first, found->second};
  const std::optional<Range> &entry = cached->second;
  uint64_t address = frame.lookupAddress() - module->loadBias();
  if (!entry || address < entry->start || address - entry->start >= entry->size)
    return UnwindResult::noInfo(""); // not the entry function
  return UnwindResult::endOfStack("the program's entry function is the outermost frame");
}

} // namespace stackwalk
