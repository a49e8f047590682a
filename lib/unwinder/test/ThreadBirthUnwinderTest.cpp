// A thread caught at its first instruction: glibc's x86-64 clone3 code as the
// core of a thread gdb stopped there holds it (clone3+0x12: mov eax, 435;
// syscall), and Debian 12's arm64 glibc __clone (mov x8, #220; svc #0; cmp x0,
// #0), whose CFI still covers that instruction.
#include "SyntheticStack.h"

#include "stackwalk/unwinder/ThreadBirthUnwinder.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Code = 0x7ffff7edc8d2, Stack = 0x7ffff7dcee00, NewStack = 0x7ffff75ff8f0;
const std::vector<uint8_t> Clone3Call = {0xb8, 0xb3, 0x01, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};
const std::vector<uint8_t> CloneCall = {0xb8, 0x38, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};
const std::vector<uint8_t> GetpidCall = {0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};
const std::vector<uint8_t> Arm64CloneCall = {0x88, 0x1b, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4, 0x1f, 0x00, 0x00, 0xf1};
const std::vector<uint8_t> Arm64GettidCall = {0x48, 0x16, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4, 0x1f, 0x00, 0x00, 0xf1};
constexpr unsigned X86Result = 0, X86NewStack = 4, Arm64Result = 0, Arm64NewStack = 1; // rax, rsi; x0, x1

struct Registers {
  uint64_t result, newStack;
};

UnwindResult::Status statusAt(Arch arch, const std::vector<uint8_t> &code, size_t callLength, Registers values,
                              FrameTrust trust = FrameTrust::Context, OS os = OS::Linux) {
  auto target = makeTarget(arch, os, makeMemory({{Code, code}, {Stack, std::vector<uint8_t>(64)}}), {},
                           {makeModule("libc.so.6", Code & ~0xfffULL, 0x1000)});
  Frame frame = makeFrame(*target, Code + callLength, Stack, trust, {}, arch);
  bool x86 = arch == Arch::X86_64;
  frame.regs.set(x86 ? X86Result : Arm64Result, values.result);
  frame.regs.set(x86 ? X86NewStack : Arm64NewStack, values.newStack);
  return ThreadBirthUnwinder().unwind(frame, *target).status;
}

UnwindResult::Status x86_64At(const std::vector<uint8_t> &code, Registers values,
                              FrameTrust trust = FrameTrust::Context, OS os = OS::Linux) {
  return statusAt(Arch::X86_64, code, 7, values, trust, os);
}

UnwindResult::Status arm64At(const std::vector<uint8_t> &code, Registers values, OS os = OS::Linux) {
  return statusAt(Arch::Arm64, code, 8, values, FrameTrust::Context, os);
}

} // namespace

TEST_CASE("a thread at its first instruction, clone3's or clone's returning 0, is the outermost frame",
          "[thread_birth]") {
  CHECK(x86_64At(Clone3Call, {0, 0}) == UnwindResult::Status::EndOfStack); // clone3's stack is in its arguments
  CHECK(x86_64At(CloneCall, {0, NewStack}) == UnwindResult::Status::EndOfStack);
  CHECK(arm64At(Arm64CloneCall, {0, NewStack}) == UnwindResult::Status::EndOfStack);
}

TEST_CASE("thread birth: the parent, a forked child, another system call, a caller's frame and other systems are not "
          "it",
          "[thread_birth]") {
  CHECK(x86_64At(Clone3Call, {16272, 0}) == UnwindResult::Status::NoInfo); // the parent: the new thread's id
  CHECK(arm64At(Arm64CloneCall, {16272, NewStack}) == UnwindResult::Status::NoInfo);
  CHECK(x86_64At(CloneCall, {0, 0}) == UnwindResult::Status::NoInfo); // fork: no new stack, the parent's frames
  CHECK(arm64At(Arm64CloneCall, {0, 0}) == UnwindResult::Status::NoInfo);
  CHECK(x86_64At(GetpidCall, {0, NewStack}) == UnwindResult::Status::NoInfo);
  CHECK(arm64At(Arm64GettidCall, {0, NewStack}) == UnwindResult::Status::NoInfo);
  CHECK(x86_64At(Clone3Call, {0, 0}, FrameTrust::Cfi) == UnwindResult::Status::NoInfo); // a return address, not a pc
  CHECK(x86_64At(Clone3Call, {0, 0}, FrameTrust::Context, OS::Windows) == UnwindResult::Status::NoInfo);
  CHECK(arm64At(Arm64CloneCall, {0, NewStack}, OS::MacOS) == UnwindResult::Status::NoInfo);
}
