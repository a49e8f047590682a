// DW_OP_entry_value: what a register held when a function was entered is what
// the caller put there, which its DW_TAG_call_site record for this call says
// how to compute in the caller's frame (DWARF 5 section 3.4, GNU's
// DW_TAG_GNU_call_site before it). gdb prints these as n@entry.
#include "CallSiteRecords.h"
#include "FrameScope.h"
#include "RegisterExpression.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/debuginfo/FrameArguments.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
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

Expected<unsigned> entryValueRegister(std::span<const uint8_t> operand) {
  if (std::optional<unsigned> reg = registerOnly(operand)) return *reg;
  return fail("DW_OP_entry_value of an expression other than a register is not evaluated");
}

namespace {

// Entry values that depend on the caller's entry values in turn, as a value
// passed down a recursion does. Frames are read from the outermost in, so
// each level usually finds its caller's answer already known.
constexpr unsigned MaxEntryValueDepth = 16;
constexpr const char *TooDeep = "entry values nest too deeply";
constexpr const char *PassedValueProblem = "the value the caller passed cannot be recovered: ";

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

std::string nameOf(const DWARFDie &function) {
  const char *name = function ? function.getShortName() : nullptr;
  return name ? name : "another function";
}

// Whether the call site calls the callee: by the callee its record names,
// else by its indirect target evaluated in the caller's frame.
Expected<bool> callsCallee(const DWARFDie &site, const FrameScope &callee, bool sameModule,
                           const DwarfExpressionContext &callerContext) {
  if (DWARFDie origin = calledFunction(site)) return isFunction(origin, callee, sameModule);
  auto target = blockAttribute(site, {dwarf::DW_AT_call_target, dwarf::DW_AT_GNU_call_site_target});
  std::optional<uint64_t> entry = functionEntry(callee.subprogram());
  if (!target || !entry) return fail("the caller's call site does not say which function it calls");
  auto address = evaluateToNumber(*target, callerContext);
  if (!address) return fail("the caller's indirect call target is unknown: " + toString(address.takeError()));
  return *address == *entry + callee.loadBias;
}

// The tail calls (jumps that reuse the frame) in `function`, when every one
// of them goes to the callee; empty when it makes none, or when one goes
// elsewhere (a chain of tail calls could then have led here another way).
std::vector<DWARFDie> tailCallsTo(const DWARFDie &function, const FrameScope &callee) {
  std::vector<DWARFDie> found;
  bool elsewhere = false;
  forEachCallSite(function, [&](const DWARFDie &site) {
    if (!site.find({dwarf::DW_AT_call_tail_call, dwarf::DW_AT_GNU_tail_call})) return false;
    DWARFDie target = calledFunction(site);
    if (target && isFunction(target, callee, true)) found.push_back(site);
    else elsewhere = true;
    return elsewhere;
  });
  return elsewhere ? std::vector<DWARFDie>() : found;
}

// What the call site passed in `reg`, computed in the calling frame.
Expected<uint64_t> passedValue(const DWARFDie &site, unsigned reg, const DwarfExpressionContext &context) {
  DWARFDie parameter = callSiteParameter(site, reg);
  auto value = parameter ? blockAttribute(parameter, {dwarf::DW_AT_call_value, dwarf::DW_AT_GNU_call_site_value})
                         : std::nullopt;
  if (!value) return fail("the caller's call site does not record the value it passed in this register");
  auto result = evaluateToNumber(*value, context);
  if (result) return *result;
  std::string why = toString(result.takeError());
  if (why.rfind(PassedValueProblem, 0) == 0) return fail(why); // said once, not at every level
  return fail(PassedValueProblem + why);
}

} // namespace

Expected<uint64_t> FrameArguments::entryValue(size_t index, unsigned reg, unsigned depth) {
  auto key = std::make_pair(index, reg);
  if (auto known = entryValues_.find(key); known != entryValues_.end()) {
    if (const uint64_t *value = std::get_if<uint64_t>(&known->second)) return *value;
    return fail(std::get<std::string>(known->second));
  }
  Expected<uint64_t> value = resolveEntryValue(index, reg, depth);
  if (value) {
    entryValues_[key] = *value;
    return *value;
  }
  std::string why = toString(value.takeError());
  // Too deep from here may resolve from a frame nearer the caller's.
  if (why.find(TooDeep) == std::string::npos) entryValues_[key] = why;
  return fail(why);
}

Expected<uint64_t> FrameArguments::resolveEntryValue(size_t index, unsigned reg, unsigned depth) {
  if (depth >= MaxEntryValueDepth) return fail(TooDeep);
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
    Expected<unsigned> reg = entryValueRegister(block);
    if (!reg) return reg.takeError();
    return entryValue(callerIndex, *reg, depth + 1);
  };
  bool sameModule = callee->frame->module == caller->frame->module;
  auto calls = callsCallee(site, *callee, sameModule, context);
  if (!calls) return calls.takeError();
  if (*calls) return passedValue(site, reg, context);
  // As gdb's tail-call frames: the caller called X, which jumped here. What
  // X passed on is known only through X's own entry values and constants.
  DWARFDie intermediate = calledFunction(site);
  DWARFDie definition = intermediate ? definitionOf(intermediate, sameModule, *callee) : DWARFDie();
  std::vector<DWARFDie> tails = definition ? tailCallsTo(definition, *callee) : std::vector<DWARFDie>();
  if (tails.empty())
    return fail("the caller's call site calls " + nameOf(intermediate) +
                ", which is not known to have jumped here by its only tail calls");
  RegisterFile unknown(callee->frame->regs.arch());
  DwarfExpressionContext jump = context;
  jump.registers = &unknown;
  jump.frameBase.reset();
  jump.cfa.reset();
  jump.entryValue = [&](std::span<const uint8_t> block) -> Expected<uint64_t> {
    Expected<unsigned> reg = entryValueRegister(block);
    if (!reg) return reg.takeError();
    return passedValue(site, *reg, context);
  };
  // Which of X's tail calls was taken is unknown: a value they all agree on.
  std::optional<uint64_t> agreed;
  for (const DWARFDie &tail : tails) {
    auto value = passedValue(tail, reg, jump);
    if (!value) return value.takeError();
    if (agreed && *agreed != *value)
      return fail(nameOf(intermediate) + " tail-calls this function in more than one way");
    agreed = *value;
  }
  return *agreed;
}

} // namespace stackwalk
