#include "ElfSymbolizableModule.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/Object/ObjectFile.h"

#include <algorithm>

using namespace llvm;

namespace stackwalk {

ElfSymbolizableModule::ElfSymbolizableModule(const object::ObjectFile &object, std::shared_ptr<const ElfSymbolTable> symbols,
                                             std::unique_ptr<DIContext> debugInfo, const ModuleImage *binary)
    : binary_(binary), symbols_(std::move(symbols)), debugInfo_(std::move(debugInfo)) {
  for (const object::SectionRef &section : object.sections())
    if (section.isText() && !section.isVirtual())
      codeSections_.push_back({section.getAddress(), section.getSize(), section.getIndex()});
  if (binary_)
    for (const object::SectionRef &section : binary_->object().sections()) {
      Expected<StringRef> name = section.getName();
      if (!name) consumeError(name.takeError());
      else if (PltStubs::isPltSection(*name)) pltSections_.emplace_back(section.getAddress(), section.getAddress() + section.getSize());
    }
}

const PltStubs::Stub *ElfSymbolizableModule::pltStubAt(uint64_t address) const {
  bool inPlt = std::any_of(pltSections_.begin(), pltSections_.end(),
                           [&](const auto &section) { return address >= section.first && address < section.second; });
  return inPlt ? binary_->pltStubs().at(address) : nullptr;
}

object::SectionedAddress ElfSymbolizableModule::withSection(object::SectionedAddress address) const {
  if (address.SectionIndex != object::SectionedAddress::UndefSection) return address;
  for (const CodeSection &section : codeSections_)
    if (address.Address >= section.start && address.Address < section.start + section.size)
      return {address.Address, section.index};
  return address;
}

bool ElfSymbolizableModule::namesFromSymbolTable(const DILineInfoSpecifier &spec, bool useSymbolTable) const {
  // LLVM: DWARF built with -gline-tables-only names functions worse than the symbol table.
  return useSymbolTable && spec.FNKind == DILineInfoSpecifier::FunctionNameKind::LinkageName &&
         isa<DWARFContext>(debugInfo_.get());
}

void ElfSymbolizableModule::nameFromSymbolTable(uint64_t address, DILineInfo &line) const {
  if (const PltStubs::Stub *stub = pltStubAt(address)) {
    line.FunctionName = stub->name;
    line.StartAddress = stub->start;
    return;
  }
  auto symbol = symbols_->at(address);
  if (!symbol) return;
  line.FunctionName = symbol->name.str();
  line.StartAddress = symbol->start;
  if (line.FileName == DILineInfo::BadString && !symbol->file.empty()) line.FileName = symbol->file.str();
}

DILineInfo ElfSymbolizableModule::symbolizeCode(object::SectionedAddress moduleOffset, DILineInfoSpecifier spec,
                                                bool useSymbolTable) const {
  object::SectionedAddress address = withSection(moduleOffset);
  DILineInfo line = debugInfo_->getLineInfoForAddress(address, spec);
  if (namesFromSymbolTable(spec, useSymbolTable)) nameFromSymbolTable(address.Address, line);
  return line;
}

DIInliningInfo ElfSymbolizableModule::symbolizeInlinedCode(object::SectionedAddress moduleOffset,
                                                           DILineInfoSpecifier spec, bool useSymbolTable) const {
  object::SectionedAddress address = withSection(moduleOffset);
  DIInliningInfo frames = debugInfo_->getInliningInfoForAddress(address, spec);
  if (frames.getNumberOfFrames() == 0) frames.addFrame(DILineInfo());
  if (namesFromSymbolTable(spec, useSymbolTable))
    nameFromSymbolTable(address.Address, *frames.getMutableFrame(frames.getNumberOfFrames() - 1));
  return frames;
}

DIGlobal ElfSymbolizableModule::symbolizeData(object::SectionedAddress moduleOffset) const {
  DIGlobal global;
  if (auto symbol = symbols_->at(moduleOffset.Address)) {
    global.Name = symbol->name.str();
    global.Start = symbol->start;
    global.Size = symbol->size;
    global.DeclFile = symbol->file.str();
  }
  DILineInfo declared = debugInfo_->getLineInfoForDataAddress(moduleOffset);
  if (declared.Line != 0) {
    global.DeclFile = declared.FileName;
    global.DeclLine = declared.Line;
  }
  return global;
}

std::vector<DILocal> ElfSymbolizableModule::symbolizeFrame(object::SectionedAddress moduleOffset) const {
  return debugInfo_->getLocalsForAddress(withSection(moduleOffset));
}

std::vector<object::SectionedAddress> ElfSymbolizableModule::findSymbol(StringRef name, uint64_t offset) const {
  std::vector<object::SectionedAddress> found;
  for (const ElfSymbolTable::Symbol &symbol : symbols_->named(name)) {
    uint64_t address = offset < symbol.size ? symbol.start + offset : symbol.start;
    found.push_back(withSection({address, object::SectionedAddress::UndefSection}));
  }
  return found;
}

} // namespace stackwalk
