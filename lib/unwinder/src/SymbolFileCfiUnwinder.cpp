#include "stackwalk/unwinder/SymbolFileCfiUnwinder.h"

#include "FrameRecordAnchor.h"
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

// "REG K +": the rule's register and K; ".cfa K + ^": ".cfa" and K.
std::optional<std::pair<llvm::StringRef, int64_t>> offsetFrom(llvm::StringRef expression, bool dereferenced) {
  llvm::SmallVector<llvm::StringRef, 4> tokens;
  expression.split(tokens, ' ', -1, /*KeepEmpty=*/false);
  int64_t offset = 0;
  if (tokens.size() != (dereferenced ? 4u : 3u) || tokens[2] != "+" || (dereferenced && tokens[3] != "^") ||
      tokens[1].getAsInteger(10, offset))
    return std::nullopt;
  return std::make_pair(tokens[0], offset);
}

// What the rules say of a frame record (FrameRecordAnchor.h).
FrameRecordRules frameRecordRules(const Rules &rules, const RegisterFile &regs) {
  FrameRecordRules out;
  auto savedAt = [&](const BreakpadSymbolFile::CfiRule *rule) -> std::optional<int64_t> {
    auto found = rule ? offsetFrom(rule->expression, /*dereferenced=*/true) : std::nullopt;
    return found && found->first == ".cfa" ? std::optional<int64_t>(found->second) : std::nullopt;
  };
  if (const BreakpadSymbolFile::CfiRule *cfa = ruleFor(rules, ".cfa"))
    if (auto base = offsetFrom(cfa->expression, /*dereferenced=*/false))
      out.cfaFromStackPointer = registerNamed(regs.arch(), base->first) == regs.spRegister();
  for (const auto &rule : rules)
    if (registerNamed(regs.arch(), rule.reg) == regs.fpRegister()) out.framePointerSavedAt = savedAt(&rule);
  out.returnAddressSavedAt = savedAt(ruleFor(rules, ".ra"));
  return out;
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
  // A rule that gives no value mostly read stack memory the dump did not keep.
  auto noValue = [&](llvm::StringRef reg, const std::string &what) {
    if (!ruleFor(*rules, reg)) return UnwindResult::noInfo("the STACK CFI rules give no " + what + " here");
    return UnwindResult::noInfo("the STACK CFI rule for the " + what +
                                " reads memory or a register the dump does not hold, or does not parse");
  };
  if (mayAnchorOnFrameRecord(frame)) cfa = cfaFromFrameRecord(frame, frameRecordRules(*rules, frame.regs), size);
  if (!cfa) cfa = value(".cfa");
  if (!cfa) return noValue(".cfa", "CFA");
  std::optional<uint64_t> returnAddress = value(".ra");
  if (!returnAddress) return noValue(".ra", "return address");

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
