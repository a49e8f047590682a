// The records of calls DWARF keeps (DW_TAG_call_site, DW_TAG_GNU_call_site
// before DWARF 5), shared by entry values (CallSites.cpp) and tail-call
// frames (TailCalls.cpp).
#include "CallSiteRecords.h"

#include "stackwalk/core/ModuleImage.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"

#include <cstring>

using namespace llvm;

namespace stackwalk {

// The call site whose return address is `returnPc` (a file address).
DWARFDie findCallSite(const DWARFDie &function, uint64_t returnPc) {
  DWARFDie found;
  forEachCallSite(function, [&](const DWARFDie &site) {
    if (callSiteReturnPc(site) == returnPc) found = site;
    return found.isValid();
  });
  return found;
}

bool sameFunction(const DWARFDie &a, const DWARFDie &b) {
  if (a.getOffset() == b.getOffset()) return true;
  for (auto link : {dwarf::DW_AT_abstract_origin, dwarf::DW_AT_specification})
    if (DWARFDie target = a.getAttributeValueAsReferencedDie(link); target && target.getOffset() == b.getOffset())
      return true;
  return false;
}

bool sameName(const DWARFDie &a, const DWARFDie &b) {
  for (const char *x : {a.getLinkageName(), a.getShortName()})
    for (const char *y : {b.getLinkageName(), b.getShortName()})
      if (x && y && std::strcmp(x, y) == 0) return true;
  return false;
}

namespace {

// A function's file address by its symbol, in the module or its debug file.
std::optional<uint64_t> symbolFileAddress(const Module &module, const char *name) {
  if (!name || !module.image) return std::nullopt;
  if (auto address = module.image->symbolAddress(name)) return address;
  const ModuleImage *debug = module.image->debugImage();
  return debug ? debug->symbolAddress(name) : std::nullopt;
}

// Whether the module or its debug file has a symbol of that name at the file address.
bool hasSymbolAt(const Module &module, const char *name, uint64_t fileAddress) {
  if (!name || !module.image) return false;
  if (module.image->hasSymbolAt(name, fileAddress)) return true;
  const ModuleImage *debug = module.image->debugImage();
  return debug && debug->hasSymbolAt(name, fileAddress);
}

// A call through another name of the function (glibc's nanosleep for
// __nanosleep): the callee's module has the name at the function's address.
bool symbolIsFunction(const DWARFDie &origin, const DWARFDie &function, const Module &module) {
  std::optional<uint64_t> entry = functionEntry(function);
  if (!entry) return false;
  for (const char *name : {origin.getLinkageName(), origin.getShortName()})
    if (hasSymbolAt(module, name, *entry)) return true;
  return false;
}

} // namespace

// The function a call site names, in the module of the frame it led to: the
// record may be a declaration (a function of another unit or module), whose
// definition is the function the DWARF has at the symbol's address.
DWARFDie definitionOf(const DWARFDie &function, bool sameModule, const FrameScope &scope) {
  if (sameModule && !function.find(dwarf::DW_AT_declaration)) return function;
  for (const char *name : {function.getLinkageName(), function.getShortName()})
    if (auto address = symbolFileAddress(*scope.frame->module, name))
      // Through the Symbolizer, which checks the unit there, and reads the
      // whole of the module's DWARF when its context holds only part of it.
      if (DWARFContext *dwarf = scope.symbolizer->dwarf(*scope.frame->module, *address))
        // LLVM answers with the innermost function there, an inlined call at the entry maybe.
        for (DWARFDie found = dwarf->getDIEsForAddress(*address).FunctionDIE; found; found = found.getParent())
          if (found.getTag() == dwarf::DW_TAG_subprogram) return found;
  return {};
}

bool isFunction(const DWARFDie &candidate, const FrameScope &callee, bool sameModule) {
  DWARFDie function = callee.subprogram();
  return (sameModule && (sameFunction(function, candidate) || sameFunction(candidate, function))) ||
         sameName(function, candidate) || symbolIsFunction(candidate, function, *callee.frame->module);
}

} // namespace stackwalk
