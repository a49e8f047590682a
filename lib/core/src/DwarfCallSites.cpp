#include "stackwalk/core/DwarfCallSites.h"

using namespace llvm;

namespace stackwalk {

bool isCallSite(const DWARFDie &die) {
  return die.getTag() == dwarf::DW_TAG_call_site || die.getTag() == dwarf::DW_TAG_GNU_call_site;
}

std::optional<uint64_t> callSiteReturnPc(const DWARFDie &site) {
  auto at = site.find({dwarf::DW_AT_call_return_pc, dwarf::DW_AT_low_pc});
  return at ? at->getAsAddress() : std::nullopt;
}

bool isTailCall(const DWARFDie &site) {
  return site.find({dwarf::DW_AT_call_tail_call, dwarf::DW_AT_GNU_tail_call}).has_value();
}

DWARFDie calledFunction(const DWARFDie &site) {
  DWARFDie origin = site.getAttributeValueAsReferencedDie(dwarf::DW_AT_call_origin);
  return origin ? origin : site.getAttributeValueAsReferencedDie(dwarf::DW_AT_abstract_origin);
}

} // namespace stackwalk
