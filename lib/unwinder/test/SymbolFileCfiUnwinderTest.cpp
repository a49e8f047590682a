#include "PostfixExpression.h"
#include "SyntheticStack.h"

#include "stackwalk/unwinder/SymbolFileCfiUnwinder.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

std::optional<uint64_t> evaluate(llvm::StringRef expression) {
  auto variable = [](llvm::StringRef name) -> std::optional<uint64_t> {
    if (name == "$rsp") return 0x1000;
    if (name == ".cfa") return 0x2000;
    return std::nullopt;
  };
  auto read = [](uint64_t address) -> std::optional<uint64_t> {
    return address == 0x1ff8 ? std::optional<uint64_t>(0xabc) : std::nullopt;
  };
  return evaluatePostfix(expression, variable, read);
}

constexpr uint64_t ModuleBase = 0x400000, StackTop = 0x7000;

std::unique_ptr<Target> targetWithSymbols(const std::string &symbols, std::vector<uint8_t> stack,
                                          Arch arch = Arch::X86_64) {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy(symbols), "app.sym");
  REQUIRE(bool(file));
  Module module = makeModule("app", ModuleBase, 0x10000);
  module.symbolFile = std::move(*file);
  return makeTarget(arch, OS::Linux, makeMemory({{StackTop, std::move(stack)}}), {}, {std::move(module)});
}

std::vector<uint8_t> words(std::vector<uint64_t> values) {
  std::vector<uint8_t> out(values.size() * 8);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

} // namespace

TEST_CASE("postfix expressions: numbers, names, operators and reads") {
  CHECK(evaluate("$rsp 16 +") == 0x1010u);
  CHECK(evaluate(".cfa -8 + ^") == 0xabcu);
  CHECK(evaluate("$rsp 0x10 -") == 0xff0u);
  CHECK(evaluate("$rsp 3 * 2 / 5 %") == (0x1000u * 3 / 2) % 5);
  CHECK(evaluate("$rsp 7 + 16 @") == 0x1000u);
  CHECK_FALSE(evaluate("$rsp 0 /"));   // division by zero
  CHECK_FALSE(evaluate("$rsp 12 @"));  // not a power of two
  CHECK_FALSE(evaluate("$rbp 8 +"));   // not known
  CHECK_FALSE(evaluate("$rsp ^"));     // not in memory
  CHECK_FALSE(evaluate("$rsp 8"));     // two values left
  CHECK_FALSE(evaluate("+"));          // too few operands
  CHECK_FALSE(evaluate(""));
  CHECK_FALSE(evaluate("$rsp 8 + ="));  // not an expression operator
}

TEST_CASE("STACK CFI unwinds a frame: CFA, return address and saved registers") {
  // At 0x1010 in the function: push rbp; mov rbp, rsp done; rbx saved below.
  auto target = targetWithSymbols("MODULE Linux x86_64 00 app\n"
                                   "STACK CFI INIT 1000 100 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                                   "STACK CFI 1004 .cfa: $rsp 16 + $rbp: .cfa -16 + ^\n"
                                   "STACK CFI 1008 .cfa: $rbp 16 + $rbx: .cfa -24 + ^\n",
                                   words({0x5b5b, 0xf00d, 0x401234, 0}));
  // rbx saved at StackTop, rbp at +8, the return address at +16: CFA = +24.
  Frame frame = makeFrame(*target, ModuleBase + 0x1010, StackTop, FrameTrust::Context, {Rbx, R12});
  frame.regs.set(Rbp, StackTop + 8);
  SymbolFileCfiUnwinder unwinder;
  UnwindResult result = unwinder.unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == 0x401234u);
  CHECK(result.caller.sp() == StackTop + 24);
  CHECK(result.caller.get(Rbp) == 0xf00du);
  CHECK(result.caller.get(Rbx) == 0x5b5bu);
  CHECK(result.caller.get(R12) == recognisable(R12)); // callee-saved, no rule: kept
  CHECK_FALSE(result.caller.get(Rax));               // volatile: unknown
  CHECK(unwinder.trust() == FrameTrust::Cfi);
}

TEST_CASE("STACK CFI: a caller frame is looked up at its call, and nothing is said outside the records") {
  auto target = targetWithSymbols("MODULE Linux x86_64 00 app\n"
                                  "STACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n",
                                  words({0x401234}));
  SymbolFileCfiUnwinder unwinder;
  // A return address at the end of the range: its call lies inside.
  Frame caller = makeFrame(*target, ModuleBase + 0x1010, StackTop, FrameTrust::Cfi, {});
  CHECK(unwinder.unwind(caller, *target).status == Status::Caller);
  Frame outside = makeFrame(*target, ModuleBase + 0x1010, StackTop, FrameTrust::Context, {});
  CHECK(unwinder.unwind(outside, *target).status == Status::NoInfo);
  Frame noModule = makeFrame(*target, 0x100, StackTop, FrameTrust::Context, {});
  CHECK(unwinder.unwind(noModule, *target).status == Status::NoInfo);
}

TEST_CASE("STACK CFI: a rule that cannot be evaluated gives no caller, or an unknown register") {
  auto target = targetWithSymbols("MODULE Linux x86_64 00 app\n"
                                  "STACK CFI INIT 1000 10 .cfa: $rsp 8 + .ra: .cfa 64 + ^ $rbx: .cfa 128 + ^\n"
                                  "STACK CFI INIT 2000 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^ $rbx: .cfa 128 + ^\n"
                                  "STACK CFI INIT 3000 10 .ra: .cfa -8 + ^\n",
                                  words({0x401234}));
  SymbolFileCfiUnwinder unwinder;
  Frame unreadable = makeFrame(*target, ModuleBase + 0x1000, StackTop, FrameTrust::Context, {Rbx});
  UnwindResult notKept = unwinder.unwind(unreadable, *target);
  CHECK(notKept.status == Status::NoInfo);
  CHECK(notKept.detail ==
        "the STACK CFI rule for the return address reads memory or a register the dump does not hold, or does not parse");
  Frame lostRbx = makeFrame(*target, ModuleBase + 0x2000, StackTop, FrameTrust::Context, {Rbx});
  UnwindResult result = unwinder.unwind(lostRbx, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK_FALSE(result.caller.get(Rbx)); // its saved slot is not in the dump
  Frame noCfa = makeFrame(*target, ModuleBase + 0x3000, StackTop, FrameTrust::Context, {});
  UnwindResult noRule = unwinder.unwind(noCfa, *target);
  CHECK(noRule.status == Status::NoInfo);
  CHECK(noRule.detail == "the STACK CFI rules give no CFA here");
}

TEST_CASE("STACK CFI on arm64: a frame found through its callee's frame record takes its CFA from its own record") {
  // GCC's layout (stp x29, x30, [sp, #-48]!; mov x29, sp), as dump_syms writes
  // it. The frame-record step gave this frame its exact x29 (StackTop+0x40,
  // its own record) and only a bound on sp (StackTop+0x30); the CFA is StackTop+0x70.
  constexpr uint64_t Stale = ModuleBase + 0x1010, Return = 0x401234;
  auto target = targetWithSymbols("MODULE Linux arm64 00 app\n"
                                  "STACK CFI INIT 1000 100 .cfa: sp 0 + .ra: x30\n"
                                  "STACK CFI 1004 .cfa: sp 48 + .ra: .cfa -40 + ^ x29: .cfa -48 + ^ x19: .cfa -32 + ^\n",
                                  words({0, 0, 0, 0, 0, 0, StackTop + 0x90, Stale, 0xf00d, Return, 0x1919}), Arch::Arm64);
  Frame frame = makeFrame(*target, ModuleBase + 0x1010, StackTop + 0x30, FrameTrust::FramePointer, {}, Arch::Arm64);
  frame.regs.set(29, StackTop + 0x40);
  frame.spIsLowerBound = true;
  SymbolFileCfiUnwinder unwinder;
  UnwindResult result = unwinder.unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == Return);
  CHECK(result.caller.sp() == StackTop + 0x70);
  CHECK(result.caller.get(29) == 0xf00du);
  CHECK(result.caller.get(19) == 0x1919u);
  // From the bound, the rules read a stale word for the return address.
  frame.spIsLowerBound = false;
  CHECK(unwinder.unwind(frame, *target).caller.pc() == Stale);
}
