#include "stackwalk/debuginfo/FrameArguments.h"

#include "FrameScope.h"
#include "ObjectBytes.h"
#include "RegisterExpression.h"
#include "ValueFormatter.h"

#include "stackwalk/core/Hex.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFFormValue.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"

using namespace llvm;

namespace stackwalk {

FrameArguments::FrameArguments(const Target &target, Symbolizer &symbolizer, std::span<const Frame> frames)
    : target_(target), symbolizer_(symbolizer), frames_(frames) {}
FrameArguments::~FrameArguments() = default;

const FrameScope *FrameArguments::scope(size_t index) {
  if (index >= frames_.size()) return nullptr;
  auto found = scopes_.find(index);
  if (found == scopes_.end()) {
    std::optional<FrameScope> made = makeFrameScope(symbolizer_, target_, frames_, index);
    found = scopes_.emplace(index, made ? std::make_unique<FrameScope>(std::move(*made)) : nullptr).first;
  }
  return found->second.get();
}

namespace {

// A parameter as the function's code has it (`concrete`: its location) and
// as its source declares it (`declared`: name and type). An inlined call or
// an out-of-line copy of an inline function declares through its abstract
// origin; a parameter the concrete copy lacks was optimized away.
struct Parameter {
  DWARFDie concrete, declared;
};

bool isParameter(const DWARFDie &die) { return die.getTag() == dwarf::DW_TAG_formal_parameter; }

std::vector<Parameter> parametersOf(const DWARFDie &function) {
  std::vector<Parameter> out;
  DWARFDie origin = function.getAttributeValueAsReferencedDie(dwarf::DW_AT_abstract_origin);
  if (!origin) {
    for (const DWARFDie &child : function.children())
      if (isParameter(child)) out.push_back({child, child});
    return out;
  }
  for (const DWARFDie &declared : origin.children()) {
    if (!isParameter(declared)) continue;
    Parameter parameter{{}, declared};
    for (const DWARFDie &child : function.children()) {
      DWARFDie childOrigin = isParameter(child) ? child.getAttributeValueAsReferencedDie(dwarf::DW_AT_abstract_origin)
                                                : DWARFDie();
      if (childOrigin && childOrigin.getOffset() == declared.getOffset()) parameter.concrete = child;
    }
    out.push_back(parameter);
  }
  return out;
}

DWARFDie parameterType(const DWARFDie &declared) {
  auto type = declared.findRecursively(dwarf::DW_AT_type);
  return type ? declared.getAttributeValueAsReferencedDie(*type) : DWARFDie();
}

// DW_AT_const_value: the value itself, as a block or a constant.
ObjectBytes constantObject(const DWARFFormValue &constant, uint64_t size) {
  ObjectBytes object;
  if (auto block = constant.getAsBlock()) {
    object.bytes.assign(block->begin(), block->end());
  } else if (auto v = constant.getAsSignedConstant()) {
    for (uint64_t i = 0; i < size && i < 8; ++i) object.bytes.push_back(uint8_t(uint64_t(*v) >> (8 * i)));
  }
  object.known.assign(object.bytes.size(), true);
  if (object.bytes.size() < size) object.problem = "a constant narrower than its type";
  return object;
}

ObjectBytes numberObject(uint64_t v, uint64_t size) {
  ObjectBytes object;
  for (uint64_t i = 0; i < size && i < 8; ++i) object.bytes.push_back(uint8_t(v >> (8 * i)));
  object.known.assign(object.bytes.size(), true);
  return object;
}

// Reads the parameters of the functions at one frame.
class ArgumentRecovery {
public:
  ArgumentRecovery(FrameArguments &arguments, const Target &target, const FrameScope &scope, size_t index)
      : arguments_(arguments), target_(target), scope_(scope), index_(index) {}

  FunctionArgument read(const Parameter &parameter, bool physicalFunction) {
    FunctionArgument argument;
    const char *name = parameter.declared.getShortName();
    argument.name = name ? name : "";
    type_ = parameterType(parameter.declared);
    argument.type = typeName(type_);
    size_ = typeSize(type_, addressSize()).value_or(0);
    if (!parameter.concrete) {
      argument.reason = "optimized out";
      return argument;
    }
    if (auto constant = parameter.concrete.find(dwarf::DW_AT_const_value)) {
      argument.location = "constant";
      show(argument, constantObject(*constant, size_));
    } else if (parameter.concrete.find(dwarf::DW_AT_location)) {
      readLocation(argument, parameter.concrete);
    } else {
      argument.reason = "optimized out";
    }
    if (physicalFunction) readEntryValue(argument, parameter.concrete);
    return argument;
  }

private:
  unsigned addressSize() const { return scope_.unit->getAddressByteSize(); }

  DwarfExpressionContext context() {
    DwarfExpressionContext context = scope_.expressionContext(target_);
    FrameArguments *arguments = &arguments_;
    size_t index = index_;
    bool *entryValueMissing = &entryValueMissing_;
    context.entryValue = [arguments, index, entryValueMissing](std::span<const uint8_t> block) -> Expected<uint64_t> {
      Expected<unsigned> reg = entryValueRegister(block);
      Expected<uint64_t> value = reg ? arguments->entryValue(index, *reg, 0) : Expected<uint64_t>(reg.takeError());
      if (!value) *entryValueMissing = true;
      return value;
    };
    return context;
  }

  void readLocation(FunctionArgument &argument, const DWARFDie &concrete) {
    auto expression = expressionAt(concrete, dwarf::DW_AT_location, scope_.pc, argument.reason);
    if (!expression) return;
    DwarfExpressionContext evaluation = context();
    entryValueMissing_ = false;
    auto location = evaluateDwarfLocation(*expression, evaluation);
    if (!location) {
      std::string why = toString(location.takeError());
      if (why.find("DW_OP_fbreg") != std::string::npos && !scope_.frameBaseProblem.empty())
        why = scope_.frameBaseProblem;
      // Only the value at entry would tell, and the caller does not: as gdb says, optimized out.
      argument.reason = (entryValueMissing_ ? "optimized out: its value at entry is unknown: " : "cannot be recovered: ") + why;
      return;
    }
    Arch arch = scope_.frame->regs.arch();
    argument.location = describeLocation(*location, arch);
    ObjectSource source{&target_, &scope_.frame->regs, !scope_.frame->ipIsExact, target_.os()};
    show(argument, gatherObject(*location, size_, source));
  }

  void show(FunctionArgument &argument, const ObjectBytes &object) {
    argument.value = formatValue(type_, object, target_, addressSize());
    if (argument.value) return;
    argument.reason = object.problem.empty() ? "its type cannot be shown" : object.problem;
    if (object.address) argument.reason += " (at " + hex(*object.address) + ")";
  }

  // gdb's name@entry: where the parameter was when the function was entered
  // (a register, for code that passes arguments in registers) and what the
  // caller put there.
  void readEntryValue(FunctionArgument &argument, const DWARFDie &concrete) {
    if (size_ == 0 || size_ > 8) return;
    std::optional<uint64_t> entry = functionEntry(scope_.subprogram());
    std::string ignored;
    auto expression = entry ? expressionAt(concrete, dwarf::DW_AT_location, *entry, ignored) : std::nullopt;
    std::optional<unsigned> reg = expression ? registerOnly(*expression) : std::nullopt;
    if (!reg) return;
    auto value = arguments_.entryValue(index_, *reg, 0);
    if (!value) {
      consumeError(value.takeError());
      return;
    }
    argument.entryValue = formatValue(type_, numberObject(*value, size_), target_, addressSize());
  }

  FrameArguments &arguments_;
  const Target &target_;
  const FrameScope &scope_;
  size_t index_;
  DWARFDie type_;
  uint64_t size_ = 0;
  bool entryValueMissing_ = false; // the evaluation failed for want of an entry value
};

} // namespace

std::vector<std::vector<FunctionArgument>> FrameArguments::at(size_t index) {
  std::vector<std::vector<FunctionArgument>> out;
  const FrameScope *frame = scope(index);
  if (!frame) return out;
  ArgumentRecovery recovery(*this, target_, *frame, index);
  for (size_t level = 0; level < frame->chain.size(); ++level) {
    std::vector<FunctionArgument> &arguments = out.emplace_back();
    for (const Parameter &parameter : parametersOf(frame->chain[level]))
      arguments.push_back(recovery.read(parameter, level + 1 == frame->chain.size()));
  }
  return out;
}

} // namespace stackwalk
