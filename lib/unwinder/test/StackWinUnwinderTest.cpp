#include "PostfixExpression.h"
#include "SyntheticStack.h"

#include "stackwalk/unwinder/StackWinUnwinder.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

// DWARF numbers of x86 registers.
constexpr unsigned Ebx = 3, Ebp = 5, Esi = 6;

constexpr uint64_t ModuleBase = 0x400000, StackTop = 0x12f000, Elsewhere = 0x900000;
// Return addresses inside the caller's FUNC record; the dump holds no code,
// so the symbol file's functions are what make them plausible.
constexpr uint64_t InCaller = ModuleBase + 0x2010;

std::vector<uint8_t> words(std::vector<uint32_t> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::unique_ptr<Target> x86Target(const std::string &stackWin, std::vector<uint32_t> stack) {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy("MODULE windows x86 "
                                                                             "00000000000000000000000000000000"
                                                                             "1 app.pdb\n"
                                                                             "FUNC 1000 100 8 callee\n"
                                                                             "FUNC 2000 100 0 caller\n" +
                                                                             stackWin),
                                        "app.sym");
  REQUIRE(bool(file));
  Module module = makeModule("app.exe", ModuleBase, 0x10000);
  module.symbolFile = std::move(*file);
  return makeTarget(Arch::X86, OS::Windows, makeMemory({{StackTop, words(std::move(stack))}}), {},
                    {std::move(module)});
}

Frame contextFrame(const Target &target, uint64_t ip, std::optional<uint64_t> ebp) {
  Frame frame = makeFrame(target, ip, StackTop, FrameTrust::Context, {}, Arch::X86);
  if (ebp) frame.regs.set(Ebp, *ebp);
  frame.regs.set(Ebx, 0xb0b0);
  return frame;
}

std::optional<uint64_t> run(const std::string &program, PostfixVariables &assigned) {
  PostfixVariables inputs{{"$esp", 0x1000}, {"$ebp", 0x1010}, {".cbSavedRegs", 4}};
  auto read = [](uint64_t address) -> std::optional<uint64_t> {
    if (address == 0x1014) return 0xfeed;
    if (address == 0x1010) return 0x2000;
    return std::nullopt;
  };
  if (!runPostfixProgram(program, inputs, assigned, read, 4)) return std::nullopt;
  return assigned.count("$eip") ? std::optional(assigned["$eip"]) : std::nullopt;
}

} // namespace

TEST_CASE("STACK WIN programs: assignments in order, reads, 32-bit arithmetic") {
  PostfixVariables assigned;
  CHECK(run("$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =", assigned) == 0xfeedu);
  CHECK(assigned["$T0"] == 0x1010u);
  CHECK(assigned["$ebp"] == 0x2000u);
  CHECK(assigned["$esp"] == 0x1018u);
  assigned.clear();
  // As DIA writes some programs (Sentry's crash.sym): no space after an assignment.
  CHECK(run("$T0 $ebp 0 + =$eip $T0 4 + ^ =$ebp $T0 ^ = $esp $T0 8 + =", assigned) == 0xfeedu);
  CHECK(assigned["$ebp"] == 0x2000u);
  assigned.clear();
  CHECK(run("$eip 0 4 - =", assigned) == 0xfffffffcu); // wraps as a 32-bit machine does
  for (const char *bad : {"$eip =", "$eip $nothing =", "$eip 8 ^ =", "4 $eip =", "$eip 1 2 =", "$eip 1 = 2",
                          ".cbSavedRegs 1 =", "$eip 1 +"}) {
    PostfixVariables none;
    INFO(bad);
    CHECK_FALSE(runPostfixProgram(bad, {}, none, [](uint64_t) { return std::optional<uint64_t>(); }, 4));
  }
}

TEST_CASE("STACK WIN: a frame data program recovers eip, esp and ebp") {
  // ebp points at the saved ebp, the return address above it.
  auto target = x86Target("STACK WIN 4 1000 100 3 0 8 0 8 0 1 $T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = "
                          "$esp $T0 8 + = $ebx $T0 4 - ^ =\n",
                          {0x11, 0x22, uint32_t(StackTop + 0x20), uint32_t(InCaller), 0, 0, 0, 0, 0});
  Frame frame = contextFrame(*target, ModuleBase + 0x1010, StackTop + 8);
  StackWinUnwinder unwinder;
  UnwindResult result = unwinder.unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == InCaller);
  CHECK(result.caller.sp() == StackTop + 16);
  CHECK(result.caller.get(Ebp) == StackTop + 0x20);
  CHECK(result.caller.get(Ebx) == 0x22u); // the program's
  CHECK_FALSE(result.caller.get(Esi));
  CHECK(result.argumentBytes == 8);
  CHECK_FALSE(result.trust); // the unwinder's own: unwind info
  CHECK(unwinder.trust() == FrameTrust::UnwindInfo);
}

TEST_CASE("STACK WIN: FPO data without a program finds the return address above the callee's arguments, locals and saved registers") {
  // The callee pushed 8 bytes of arguments; 8 of locals and 4 of saved registers.
  auto target = x86Target("STACK WIN 0 1000 100 0 0 c 4 8 0 0 0\n",
                          {1, 2, 3, 4, 5, uint32_t(InCaller), 0, 0, 0});
  Frame frame = makeFrame(*target, ModuleBase + 0x1011, StackTop, FrameTrust::UnwindInfo, {}, Arch::X86);
  frame.calleeArgumentBytes = 8;
  frame.regs.set(Ebp, 0x5555);
  UnwindResult result = StackWinUnwinder().unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == InCaller);
  CHECK(result.caller.sp() == StackTop + 24);
  CHECK(result.caller.get(Ebp) == 0x5555u); // untouched by a function that does not use it
  CHECK(result.argumentBytes == 0xc);
}

TEST_CASE("STACK WIN: a function that uses ebp for itself saved the caller's among its saved registers") {
  auto target = x86Target("STACK WIN 0 1000 100 0 0 0 8 0 0 0 1\n",
                          {uint32_t(StackTop + 0x10), 0x77, uint32_t(InCaller), 0, 0, 0});
  Frame frame = contextFrame(*target, ModuleBase + 0x1010, 0x1);
  UnwindResult result = StackWinUnwinder().unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == InCaller);
  CHECK(result.caller.sp() == StackTop + 12);
  CHECK(result.caller.get(Ebp) == StackTop + 0x10);
}

TEST_CASE("STACK WIN: a stack the prolog aligned puts the return address up to three words higher") {
  auto target = x86Target("STACK WIN 0 1000 100 0 0 0 0 4 0 0 0\n",
                          {0x1, 0x2, 0x3, uint32_t(InCaller), 0, 0});
  Frame frame = contextFrame(*target, ModuleBase + 0x1010, 0x5555);
  UnwindResult result = StackWinUnwinder().unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == InCaller);
  CHECK(result.caller.sp() == StackTop + 16);
  CHECK_FALSE(result.trust);
}

TEST_CASE("STACK WIN: a return address outside every module is searched for further up, as a scan") {
  std::vector<uint32_t> stack{uint32_t(Elsewhere)};
  for (int i = 0; i < 6; ++i) stack.push_back(0x1);
  stack.push_back(uint32_t(InCaller));
  stack.push_back(0);
  auto target = x86Target("STACK WIN 4 1000 100 0 0 0 0 0 0 1 $eip $esp ^ = $esp $esp 4 + =\n", stack);
  Frame frame = contextFrame(*target, ModuleBase + 0x1010, StackTop + 0x100);
  UnwindResult result = StackWinUnwinder().unwind(frame, *target);
  REQUIRE(result.status == Status::Caller);
  CHECK(result.caller.pc() == InCaller);
  CHECK(result.caller.sp() == StackTop + 8 * 4);
  CHECK(result.trust == FrameTrust::Scan);
}

TEST_CASE("STACK WIN: nothing to say without a record, a program that fails, or on another architecture") {
  auto target = x86Target("STACK WIN 4 1000 80 0 0 0 0 0 0 1 $eip $nowhere ^ =\n", {uint32_t(InCaller), 0});
  StackWinUnwinder unwinder;
  CHECK(unwinder.unwind(contextFrame(*target, ModuleBase + 0x1010, 0x1), *target).status == Status::NoInfo);
  CHECK(unwinder.unwind(contextFrame(*target, ModuleBase + 0x1090, 0x1), *target).status == Status::NoInfo);
  auto x64 = makeTarget(Arch::X86_64, OS::Windows, makeMemory({}), {}, {});
  CHECK(unwinder.unwind(makeFrame(*x64, 0x1000, StackTop, FrameTrust::Context, {}), *x64).status == Status::NoInfo);
}
