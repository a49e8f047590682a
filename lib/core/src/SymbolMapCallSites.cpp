#include "SymbolMapSources.h"

#include "stackwalk/core/DwarfCallSites.h"
#include "stackwalk/core/DwarfUnitCheck.h"
#include "stackwalk/core/ElfSymbolTable.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/SymbolMap.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Object/ELFObjectFile.h"

#include <algorithm>
#include <unordered_map>

using namespace llvm;

namespace stackwalk {
namespace {

// DIEs visited in all, at most: nested functions are visited once for each
// function around them, which a hostile file can make quadratic.
constexpr size_t MaxVisits = size_t(1) << 24;

class CallSiteScan {
public:
  explicit CallSiteScan(SymbolMapWriter &out) : out_(out) {}
  // Whether the scan stopped short: then the map cannot rule any call site out.
  bool overBudget() const { return visits_ > MaxVisits; }

  void unit(DWARFUnit &unit) {
    for (unsigned i = 0, count = unit.getNumDIEs(); i < count && !overBudget(); ++i) {
      DWARFDie die = unit.getDIEAtIndex(i);
      if (isCallSite(die)) site(die);
      else if (die.getTag() == dwarf::DW_TAG_subprogram && makesTailCalls(die)) addSubtreeRanges(die);
    }
  }

  // The symbols by which definitionOf (CallSiteRecords.cpp) would find a
  // function that makes tail calls: any symbol inside one's code.
  void addTailCallingNames(const ModuleImage &file) {
    const auto *elf = dyn_cast<object::ELFObjectFileBase>(&file.object());
    if (!elf || !file.symbolTablesUsable() || tailCallingCode_.empty() || !llvmReadsAllSymbolNamesInBounds(*elf))
      return;
    mergeRanges();
    auto addAll = [&](auto symbols) {
      for (object::ELFSymbolRef symbol : symbols) {
        Expected<uint64_t> address = symbol.getAddress();
        Expected<StringRef> name = symbol.getName();
        if (address && name && !name->empty() && inTailCallingCode(*address)) out_.addTailCallingName(name->str());
        if (!address) consumeError(address.takeError());
        if (!name) consumeError(name.takeError());
      }
    };
    addAll(elf->symbols());
    addAll(elf->getDynamicSymbolIterators());
  }

private:
  void site(const DWARFDie &site) {
    std::optional<uint64_t> returnPc = callSiteReturnPc(site);
    DWARFDie called = calledFunction(site);
    if (!returnPc || !called) return; // TailCalls finds no record there, or no function named
    if (!called.find(dwarf::DW_AT_declaration)) {
      if (makesTailCalls(called)) out_.addTailCallingSite(*returnPc);
      return;
    }
    for (const char *name : {called.getLinkageName(), called.getShortName()})
      if (name) out_.addDeclaredCallSite(*returnPc, name);
  }

  // As ChainSearch in TailCalls.cpp starts: a tail call's record among the function's call sites.
  bool makesTailCalls(const DWARFDie &function) {
    auto [known, fresh] = makesTailCalls_.try_emplace(function.getOffset());
    if (fresh)
      forEachCallSite(function, [&](const DWARFDie &site) {
        ++visits_;
        return known->second = isTailCall(site);
      });
    visits_ += fresh; // forEachCallSite visits at least the function's DIE
    return known->second;
  }

  // The function's code, and every DIE's inside it: where a symbol leads to it.
  void addSubtreeRanges(const DWARFDie &function) {
    std::vector<DWARFDie> pending{function};
    for (size_t visited = 0; !pending.empty() && visited < MaxDiesVisited && !overBudget(); ++visited, ++visits_) {
      DWARFDie die = pending.back();
      pending.pop_back();
      if (auto ranges = die.getAddressRanges()) {
        for (const DWARFAddressRange &range : *ranges) tailCallingCode_.emplace_back(range.LowPC, range.HighPC);
      } else {
        consumeError(ranges.takeError());
      }
      for (const DWARFDie &child : die.children()) pending.push_back(child);
    }
  }

  void mergeRanges() {
    std::sort(tailCallingCode_.begin(), tailCallingCode_.end());
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    for (auto [low, high] : tailCallingCode_) {
      if (!merged.empty() && low <= merged.back().second) merged.back().second = std::max(merged.back().second, high);
      else merged.emplace_back(low, high);
    }
    tailCallingCode_ = std::move(merged);
  }

  bool inTailCallingCode(uint64_t address) const {
    auto after = std::upper_bound(tailCallingCode_.begin(), tailCallingCode_.end(), std::make_pair(address, UINT64_MAX));
    return after != tailCallingCode_.begin() && address < std::prev(after)->second;
  }

  SymbolMapWriter &out_;
  size_t visits_ = 0;
  std::unordered_map<uint64_t, bool> makesTailCalls_; // by DIE offset
  std::vector<std::pair<uint64_t, uint64_t>> tailCallingCode_;
};

} // namespace

void addCallSites(const ModuleImage &image, DWARFContext &dwarf, DwarfUnitCheck &units, SymbolMapWriter &out) {
  CallSiteScan scan(out);
  for (const std::unique_ptr<DWARFUnit> &unit : dwarf.normal_units())
    if (units.unitClosureReadable(*unit) && !scan.overBudget()) scan.unit(*unit);
  if (scan.overBudget()) return out.addUnknownCallSites();
  scan.addTailCallingNames(image);
  if (const ModuleImage *debug = image.debugImage()) scan.addTailCallingNames(*debug);
}

} // namespace stackwalk
