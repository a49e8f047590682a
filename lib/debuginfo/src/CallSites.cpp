// DW_OP_entry_value: what a register held when a function was entered is what
// the caller put there, which its DW_TAG_call_site record for this call says
// how to compute in the caller's frame (DWARF 5 section 3.4, GNU's
// DW_TAG_GNU_call_site before it). gdb prints these as n@entry.
#include "FrameScope.h"
#include "RegisterExpression.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/debuginfo/FrameArguments.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFFormValue.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Support/DataExtractor.h"

#include <cstring>

using namespace llvm;

namespace stackwalk {

std::optional<unsigned> registerOnly(std::span<const uint8_t> expression) {
  if (expression.size() == 1 && expression[0] >= dwarf::DW_OP_reg0 && expression[0] <= dwarf::DW_OP_reg31)
    return expression[0] - dwarf::DW_OP_reg0;
  if (expression.empty() || expression[0] != dwarf::DW_OP_regx) return std::nullopt;
  DataExtractor data(StringRef(reinterpret_cast<const char *>(expression.data()), expression.size()), true, 8);
  DataExtractor::Cursor cursor(1);
  uint64_t number = data.getULEB128(cursor);
  if (!cursor || cursor.tell() != expression.size() || number > UINT32_MAX) {
    consumeError(cursor.takeError());
    return std::nullopt;
  }
  return unsigned(number);
}

namespace {

constexpr unsigned MaxEntryValueDepth = 4; // call_value expressions that use entry values in turn
constexpr size_t MaxDiesVisited = 200000;  // one function's DIEs searched for a call site

Error fail(const Twine &message) { return createStringError(inconvertibleErrorCode(), message); }

bool isCallSite(const DWARFDie &die) {
  return die.getTag() == dwarf::DW_TAG_call_site || die.getTag() == dwarf::DW_TAG_GNU_call_site;
}

// The call site whose return address is `returnPc` (a file address), anywhere
// in the function, inlined bodies included.
DWARFDie findCallSite(const DWARFDie &function, uint64_t returnPc) {
  std::vector<DWARFDie> pending{function};
  for (size_t visited = 0; !pending.empty() && visited < MaxDiesVisited; ++visited) {
    DWARFDie die = pending.back();
    pending.pop_back();
    if (isCallSite(die)) {
      auto at = die.find({dwarf::DW_AT_call_return_pc, dwarf::DW_AT_low_pc});
      if (at && at->getAsAddress() == returnPc) return die;
      continue;
    }
    for (const DWARFDie &child : die.children()) pending.push_back(child);
  }
  return {};
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

std::optional<uint64_t> entryAddress(const DWARFDie &function) {
  if (auto low = function.find({dwarf::DW_AT_entry_pc, dwarf::DW_AT_low_pc}))
    if (auto address = low->getAsAddress()) return *address;
  if (auto ranges = function.getAddressRanges(); ranges && !ranges->empty()) return ranges->front().LowPC;
  else if (!ranges) consumeError(ranges.takeError());
  return std::nullopt;
}

// A call through another name of the function (glibc's nanosleep for
// __nanosleep): the callee's module has the name at the function's address.
bool symbolIsFunction(const DWARFDie &origin, const DWARFDie &function, const Module &module) {
  std::optional<uint64_t> entry = entryAddress(function);
  if (!entry || !module.image) return false;
  for (const char *name : {origin.getLinkageName(), origin.getShortName()}) {
    if (!name) continue;
    const ModuleImage *debug = module.image->debugImage();
    std::optional<uint64_t> address = module.image->symbolAddress(name);
    if (!address && debug) address = debug->symbolAddress(name);
    if (address == entry) return true;
  }
  return false;
}

DWARFDie callSiteParameter(const DWARFDie &site, unsigned reg) {
  for (const DWARFDie &child : site.children()) {
    if (child.getTag() != dwarf::DW_TAG_call_site_parameter && child.getTag() != dwarf::DW_TAG_GNU_call_site_parameter)
      continue;
    auto location = child.find(dwarf::DW_AT_location);
    auto block = location ? location->getAsBlock() : std::nullopt;
    if (block && registerOnly({block->data(), block->size()}) == reg) return child;
  }
  return {};
}

std::optional<std::vector<uint8_t>> blockAttribute(const DWARFDie &die, std::initializer_list<dwarf::Attribute> names) {
  auto value = die.find(names);
  auto block = value ? value->getAsBlock() : std::nullopt;
  if (!block) return std::nullopt;
  return std::vector<uint8_t>(block->begin(), block->end());
}

} // namespace

// Whether the caller's call site calls the callee's function: a tail call
// in between would make the caller's record describe another call.
static Error checkCallee(const DWARFDie &site, const FrameScope &callee, const FrameScope &caller,
                         const DwarfExpressionContext &callerContext) {
  DWARFDie calleeFunction = callee.subprogram();
  DWARFDie origin = site.getAttributeValueAsReferencedDie(dwarf::DW_AT_call_origin);
  if (!origin) origin = site.getAttributeValueAsReferencedDie(dwarf::DW_AT_abstract_origin);
  if (origin) {
    bool sameModule = callee.frame->module == caller.frame->module;
    if ((sameModule && (sameFunction(calleeFunction, origin) || sameFunction(origin, calleeFunction))) ||
        sameName(calleeFunction, origin) || symbolIsFunction(origin, calleeFunction, *callee.frame->module))
      return Error::success();
    const char *name = origin.getShortName();
    return fail("the caller's call site calls " + Twine(name ? name : "another function") +
                ", not this function (a tail call in between?)");
  }
  auto target = blockAttribute(site, {dwarf::DW_AT_call_target, dwarf::DW_AT_GNU_call_site_target});
  std::optional<uint64_t> entry = entryAddress(calleeFunction);
  if (!target || !entry) return fail("the caller's call site does not say which function it calls");
  auto address = evaluateToNumber(*target, callerContext);
  if (!address) return fail("the caller's indirect call target is unknown: " + toString(address.takeError()));
  if (*address != *entry + callee.loadBias)
    return fail("the caller's indirect call goes to " + hex(*address) + ", not this function");
  return Error::success();
}

Expected<uint64_t> FrameArguments::entryValue(size_t index, unsigned reg, unsigned depth) {
  if (depth >= MaxEntryValueDepth) return fail("entry values nest too deeply");
  const FrameScope *callee = scope(index);
  size_t callerIndex = index + 1;
  if (!callee || callerIndex >= frames_.size()) return fail("no caller frame to find the call site in");
  if (frames_[callerIndex].ipIsExact) return fail("the caller was interrupted, not making a call");
  const FrameScope *caller = scope(callerIndex);
  if (!caller) return fail("the caller has no debug info");
  uint64_t returnPc = frames_[callerIndex].ip - caller->loadBias;
  DWARFDie site = findCallSite(caller->subprogram(), returnPc);
  if (!site) return fail("the caller has no call-site record for this call");
  DwarfExpressionContext context = caller->expressionContext(target_);
  context.entryValue = [this, callerIndex, depth](std::span<const uint8_t> block) -> Expected<uint64_t> {
    std::optional<unsigned> r = registerOnly(block);
    if (!r) return fail("DW_OP_entry_value of an expression other than a register is not evaluated");
    return entryValue(callerIndex, *r, depth + 1);
  };
  if (Error err = checkCallee(site, *callee, *caller, context)) return err;
  DWARFDie parameter = callSiteParameter(site, reg);
  auto value = parameter ? blockAttribute(parameter, {dwarf::DW_AT_call_value, dwarf::DW_AT_GNU_call_site_value})
                         : std::nullopt;
  if (!value) return fail("the caller's call site does not record the value it passed in this register");
  auto result = evaluateToNumber(*value, context);
  if (!result) return fail("the value the caller passed cannot be recovered: " + toString(result.takeError()));
  return *result;
}

} // namespace stackwalk
