// LLVM 19's SymbolizableObjectFile for a linked ELF file, with its symbol
// table read by ElfSymbolTable: the same answers from the same DWARF context
// (ElfSymbolTableTest compares them), without LLVM's generic symbol
// iterators, and with the table read before the DWARF is ready, so that it
// is made while a prefetched debug file still inflates. An address in one of
// the image's PLT stubs is named after the stub (PltStubs.h), as gdb names it.
#pragma once

#include "stackwalk/core/ElfSymbolTable.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/PltStubs.h"

#include "llvm/DebugInfo/DIContext.h"
#include "llvm/DebugInfo/Symbolize/SymbolizableModule.h"

#include <memory>
#include <vector>

namespace llvm::object {
class ObjectFile;
}

namespace stackwalk {

class ElfSymbolizableModule : public llvm::symbolize::SymbolizableModule {
public:
  // `object` is the file the symbols were read from: the table's names are
  // its strings, so it must outlive the module. `binary`, when given, is the
  // image whose PLT stubs are named (the symbols may come from its debug
  // file, which has no stubs): it must outlive the module too.
  ElfSymbolizableModule(const llvm::object::ObjectFile &object, std::shared_ptr<const ElfSymbolTable> symbols,
                        std::unique_ptr<llvm::DIContext> debugInfo, const ModuleImage *binary = nullptr);

  llvm::DILineInfo symbolizeCode(llvm::object::SectionedAddress moduleOffset, llvm::DILineInfoSpecifier spec,
                                 bool useSymbolTable) const override;
  llvm::DIInliningInfo symbolizeInlinedCode(llvm::object::SectionedAddress moduleOffset,
                                            llvm::DILineInfoSpecifier spec, bool useSymbolTable) const override;
  llvm::DIGlobal symbolizeData(llvm::object::SectionedAddress moduleOffset) const override;
  std::vector<llvm::DILocal> symbolizeFrame(llvm::object::SectionedAddress moduleOffset) const override;
  std::vector<llvm::object::SectionedAddress> findSymbol(llvm::StringRef symbol, uint64_t offset) const override;
  bool isWin32Module() const override { return false; }
  uint64_t getModulePreferredBase() const override { return 0; }

private:
  // The file's executable section holding the address, as LLVM gives it to the DWARF context.
  llvm::object::SectionedAddress withSection(llvm::object::SectionedAddress address) const;
  // Whether the symbol table's name replaces the debug info's (LLVM: for linkage names from DWARF).
  bool namesFromSymbolTable(const llvm::DILineInfoSpecifier &spec, bool useSymbolTable) const;
  // The symbol table's name, start and (where debug info has none) file, set on `line`.
  void nameFromSymbolTable(uint64_t address, llvm::DILineInfo &line) const;
  // The binary's PLT stub holding the address, its stubs read when first asked.
  const PltStubs::Stub *pltStubAt(uint64_t address) const;

  struct CodeSection {
    uint64_t start, size, index;
  };
  std::vector<CodeSection> codeSections_; // in the file's order
  const ModuleImage *binary_;
  std::vector<std::pair<uint64_t, uint64_t>> pltSections_; // the binary's: start, end
  std::shared_ptr<const ElfSymbolTable> symbols_; // never null
  std::unique_ptr<llvm::DIContext> debugInfo_;
};

} // namespace stackwalk
