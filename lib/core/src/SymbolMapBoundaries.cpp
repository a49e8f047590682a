#include "SymbolMapSources.h"

#include "stackwalk/core/DwarfUnitCheck.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugArangeSet.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugLine.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Object/ELFObjectFile.h"

#include <algorithm>

using namespace llvm;

namespace stackwalk {
namespace {

class Boundaries {
public:
  explicit Boundaries(size_t max) : max_(max) { addresses_.push_back(0); }
  void add(uint64_t address) {
    if (addresses_.size() <= max_) addresses_.push_back(address);
  }
  void addRange(uint64_t start, uint64_t end) {
    add(start);
    add(end);
  }
  bool full() const { return addresses_.size() > max_; }
  std::vector<uint64_t> take() {
    std::sort(addresses_.begin(), addresses_.end());
    addresses_.erase(std::unique(addresses_.begin(), addresses_.end()), addresses_.end());
    return std::move(addresses_);
  }

private:
  size_t max_;
  std::vector<uint64_t> addresses_;
};

void addSections(const ModuleImage &file, Boundaries &out) {
  for (const object::SectionRef &section : file.object().sections())
    if (section.getAddress()) out.addRange(section.getAddress(), section.getAddress() + section.getSize());
}

// Both symbol tables: LLVM's symbolizer reads one or the other, a superset is safe.
void addSymbols(const ModuleImage &file, Boundaries &out) {
  const auto *elf = dyn_cast<object::ELFObjectFileBase>(&file.object());
  if (!elf || !file.symbolTablesUsable()) return;
  auto addAll = [&](auto symbols) {
    for (object::ELFSymbolRef symbol : symbols) {
      Expected<uint64_t> address = symbol.getAddress();
      if (!address) {
        consumeError(address.takeError());
        continue;
      }
      out.addRange(*address, *address + symbol.getSize());
    }
  };
  addAll(elf->symbols());
  addAll(elf->getDynamicSymbolIterators());
}

// The image's PLT stubs, which the Symbolizer names (PltStubs.h).
void addPltStubs(const ModuleImage &image, Boundaries &out) {
  for (const PltStubs::Stub &stub : image.pltStubs().stubs()) out.addRange(stub.start, stub.end);
}

void addArangeSets(DWARFContext &dwarf, Boundaries &out) {
  const DWARFObject &object = dwarf.getDWARFObj();
  DWARFDataExtractor data(object.getArangesSection(), object.isLittleEndian(), 0);
  uint64_t offset = 0;
  DWARFDebugArangeSet set;
  while (data.isValidOffset(offset) && !out.full()) {
    if (Error err = set.extract(data, &offset, [](Error e) { consumeError(std::move(e)); })) {
      consumeError(std::move(err)); // LLVM stops reading the table there too
      return;
    }
    for (const auto &descriptor : set.descriptors()) out.addRange(descriptor.Address, descriptor.getEndAddress());
  }
}

void addRanges(Expected<DWARFAddressRangesVector> ranges, Boundaries &out) {
  if (!ranges) return consumeError(ranges.takeError());
  for (const DWARFAddressRange &range : *ranges) out.addRange(range.LowPC, range.HighPC);
}

// Every DIE with an address or ranges (functions, inlined calls, blocks),
// and every line row.
void addUnit(DWARFContext &dwarf, DWARFUnit &unit, Boundaries &out) {
  for (unsigned i = 0, count = unit.getNumDIEs(); i < count && !out.full(); ++i) {
    DWARFDie die = unit.getDIEAtIndex(i);
    const DWARFAbbreviationDeclaration *abbreviation = die.getAbbreviationDeclarationPtr();
    if (!abbreviation) continue;
    bool low = abbreviation->findAttributeIndex(dwarf::DW_AT_low_pc).has_value();
    if (!low && !abbreviation->findAttributeIndex(dwarf::DW_AT_ranges)) continue;
    if (low)
      if (auto value = die.find(dwarf::DW_AT_low_pc))
        if (auto address = value->getAsAddress()) out.add(*address);
    addRanges(die.getAddressRanges(), out);
  }
  if (const DWARFDebugLine::LineTable *table = dwarf.getLineTableForUnit(&unit))
    for (const DWARFDebugLine::Row &row : table->Rows) out.add(row.Address.Address);
}

} // namespace

std::optional<std::vector<uint64_t>> symbolMapBoundaries(const ModuleImage &image, DWARFContext *dwarf,
                                                         DwarfUnitCheck *units, size_t maxBoundaries) {
  Boundaries out(maxBoundaries);
  addSections(image, out);
  addSymbols(image, out);
  addPltStubs(image, out);
  if (const ModuleImage *debug = image.debugImage()) addSymbols(*debug, out);
  if (dwarf) {
    addArangeSets(*dwarf, out);
    for (const std::unique_ptr<DWARFUnit> &unit : dwarf->normal_units()) {
      if (unit->getDWOId()) return std::nullopt;
      addRanges(unit->collectAddressRanges(), out);
      if (units && units->unitClosureReadable(*unit)) addUnit(*dwarf, *unit, out);
      if (out.full()) break;
    }
  }
  if (out.full()) return std::nullopt;
  return out.take();
}

} // namespace stackwalk
