#include "FrameScope.h"

#include "stackwalk/core/Fail.h"

#include "llvm/DebugInfo/DWARF/DWARFCompileUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFLocationExpression.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"

using namespace llvm;

namespace stackwalk {

std::optional<std::vector<uint8_t>> expressionAt(const DWARFDie &die, dwarf::Attribute attribute, uint64_t pc,
                                                 std::string &problem) {
  Expected<DWARFLocationExpressionsVector> locations = die.getLocations(attribute);
  if (!locations) {
    problem = "its location list does not parse: " + toString(locations.takeError());
    return std::nullopt;
  }
  for (const DWARFLocationExpression &location : *locations)
    if (!location.Range || (location.Range->LowPC <= pc && pc < location.Range->HighPC))
      return std::vector<uint8_t>(location.Expr.begin(), location.Expr.end());
  problem = "optimized out: no location at this pc";
  return std::nullopt;
}

std::optional<uint64_t> functionEntry(const DWARFDie &function) {
  if (auto low = function.find({dwarf::DW_AT_entry_pc, dwarf::DW_AT_low_pc}))
    if (auto address = low->getAsAddress()) return *address;
  if (auto ranges = function.getAddressRanges(); ranges && !ranges->empty()) return ranges->front().LowPC;
  else if (!ranges) consumeError(ranges.takeError());
  return std::nullopt;
}

Expected<uint64_t> evaluateToNumber(std::span<const uint8_t> expression, const DwarfExpressionContext &context) {
  auto result = evaluateDwarfExpression(expression, context);
  if (!result) return result.takeError();
  if (result->kind != DwarfExpressionResult::Kind::Register) return result->value;
  std::optional<uint64_t> value = context.registers ? context.registers->get(unsigned(result->value)) : std::nullopt;
  if (!value)
    return fail("register " + Twine(result->value) + " is not known in this frame");
  return *value;
}

DwarfExpressionContext FrameScope::expressionContext(const MemorySource &memory) const {
  DwarfExpressionContext context;
  context.memory = &memory;
  context.registers = &frame->regs;
  context.addressSize = unit->getAddressByteSize();
  context.offsetSize = unit->getFormParams().getDwarfOffsetByteSize();
  context.frameBase = frameBase;
  context.cfa = cfa;
  context.loadBias = loadBias;
  DWARFUnit *u = unit;
  context.indexedAddress = [u](uint64_t index) -> std::optional<uint64_t> {
    if (auto address = u->getAddrOffsetSectionItem(uint32_t(index))) return address->Address;
    return std::nullopt;
  };
  return context;
}

namespace {

// DW_AT_frame_base: a location (DW_OP_call_frame_cfa, DW_OP_bregN) whose
// address is the base; a register location means the register's value.
void findFrameBase(FrameScope &scope, const MemorySource &memory) {
  DWARFDie function = scope.subprogram();
  if (!function.find(dwarf::DW_AT_frame_base)) {
    scope.frameBaseProblem = "the function has no frame base";
    return;
  }
  auto expression = expressionAt(function, dwarf::DW_AT_frame_base, scope.pc, scope.frameBaseProblem);
  if (!expression) return;
  auto base = evaluateToNumber(*expression, scope.expressionContext(memory));
  if (base) scope.frameBase = *base;
  else scope.frameBaseProblem = "no frame base: " + toString(base.takeError());
}

} // namespace

std::optional<FrameScope> makeFrameScope(Symbolizer &symbolizer, const MemorySource &memory,
                                         std::span<const Frame> frames, size_t index) {
  const Frame &frame = frames[index];
  if (!frame.module || !frame.module->image) return std::nullopt;
  FrameScope scope;
  scope.frame = &frame;
  scope.symbolizer = &symbolizer;
  scope.loadBias = frame.module->loadBias();
  scope.pc = frame.symbolAddress() - scope.loadBias;
  DWARFContext *dwarf = symbolizer.dwarf(*frame.module, scope.pc);
  if (!dwarf) return std::nullopt;
  scope.unit = dwarf->getCompileUnitForCodeAddress(scope.pc);
  if (!scope.unit) return std::nullopt;
  scope.unit->getInlinedChainForAddress(scope.pc, scope.chain);
  if (scope.chain.empty()) return std::nullopt;
  // On x86-64 the CFA is the caller's stack pointer before its call pushed
  // the return address: the sp of a caller reached by a return address.
  if (index + 1 < frames.size() && !frames[index + 1].ipIsExact) scope.cfa = frames[index + 1].sp;
  findFrameBase(scope, memory);
  return scope;
}

} // namespace stackwalk
