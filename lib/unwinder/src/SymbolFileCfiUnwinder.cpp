#include "stackwalk/unwinder/SymbolFileCfiUnwinder.h"

#include "PostfixExpression.h"

namespace stackwalk {
namespace {

using Rules = std::vector<BreakpadSymbolFile::CfiRule>;

const BreakpadSymbolFile::CfiRule *ruleFor(const Rules &rules, llvm::StringRef reg) {
  for (const auto &rule : rules)
    if (rule.reg == reg) return &rule;
  return nullptr;
}

// A register as the rules name it: "$rbp" (dump_syms for x86), "x29" (arm64).
std::optional<unsigned> registerNamed(Arch arch, llvm::StringRef name) {
  name.consume_front("$");
  return registerByName(arch, name);
}

} // namespace

UnwindResult SymbolFileCfiUnwinder::unwind(const Frame &frame, const Target &target) {
  const Module *module = frame.module;
  if (!module || !module->symbolFile) return UnwindResult::noInfo(""); // not its kind of frame
  std::optional<Rules> rules = module->symbolFile->cfiRules(frame.lookupAddress() - module->base);
  if (!rules) return UnwindResult::noInfo("the symbol file has no STACK CFI record for the address");
  Arch arch = frame.regs.arch();
  unsigned size = pointerSize(arch);
  std::optional<uint64_t> cfa;
  auto variable = [&](llvm::StringRef name) -> std::optional<uint64_t> {
    if (name == ".cfa") return cfa;
    std::optional<unsigned> reg = registerNamed(arch, name);
    return reg ? frame.regs.get(*reg) : std::nullopt;
  };
  auto read = [&](uint64_t address) { return target.readPointer(address, size); };
  auto value = [&](llvm::StringRef reg) -> std::optional<uint64_t> {
    const BreakpadSymbolFile::CfiRule *rule = ruleFor(*rules, reg);
    return rule ? evaluatePostfix(rule->expression, variable, read) : std::nullopt;
  };
  cfa = value(".cfa");
  if (!cfa) return UnwindResult::noInfo("the STACK CFI rules give no CFA here");
  std::optional<uint64_t> returnAddress = value(".ra");
  if (!returnAddress) return UnwindResult::noInfo("the STACK CFI rules give no return address here");

  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  // Without a rule, only a callee-saved register keeps its value in the caller.
  result.caller = frame.regs.calleeSavedOnly(target.os());
  for (const BreakpadSymbolFile::CfiRule &rule : *rules) {
    std::optional<unsigned> reg = rule.reg.starts_with(".") ? std::nullopt : registerNamed(arch, rule.reg);
    if (!reg) continue;
    if (std::optional<uint64_t> saved = value(rule.reg)) result.caller.set(*reg, *saved);
    else result.caller.forget(*reg);
  }
  result.caller.setSp(*cfa);
  result.caller.setPc(*returnAddress);
  return result;
}

} // namespace stackwalk
