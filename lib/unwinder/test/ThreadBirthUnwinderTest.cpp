// A thread caught at its first instruction, glibc's clone3 code as the core of
// a thread gdb stopped there holds it (clone3+0x12: mov eax, 435; syscall).
#include "SyntheticStack.h"

#include "stackwalk/unwinder/ThreadBirthUnwinder.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Code = 0x7ffff7edc8d2, Stack = 0x7ffff7dcee00;
constexpr unsigned Rax = 0;
const std::vector<uint8_t> Clone3Call = {0xb8, 0xb3, 0x01, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};
const std::vector<uint8_t> CloneCall = {0xb8, 0x38, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};
const std::vector<uint8_t> GetpidCall = {0xb8, 0x27, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x85, 0xc0};

UnwindResult::Status statusAt(const std::vector<uint8_t> &code, uint64_t rax, FrameTrust trust = FrameTrust::Context,
                              OS os = OS::Linux) {
  auto target = makeTarget(Arch::X86_64, os, makeMemory({{Code, code}, {Stack, std::vector<uint8_t>(64)}}), {},
                           {makeModule("libc.so.6", Code & ~0xfffULL, 0x1000)});
  Frame frame = makeFrame(*target, Code + 7, Stack, trust, {});
  frame.regs.set(Rax, rax);
  return ThreadBirthUnwinder().unwind(frame, *target).status;
}

} // namespace

TEST_CASE("a thread at its first instruction, clone3's or clone's returning 0, is the outermost frame",
          "[thread_birth]") {
  CHECK(statusAt(Clone3Call, 0) == UnwindResult::Status::EndOfStack);
  CHECK(statusAt(CloneCall, 0) == UnwindResult::Status::EndOfStack);
}

TEST_CASE("thread birth: the parent, another system call, a caller's frame and Windows are not it", "[thread_birth]") {
  CHECK(statusAt(Clone3Call, 16272) == UnwindResult::Status::NoInfo); // the parent: the new thread's id
  CHECK(statusAt(GetpidCall, 0) == UnwindResult::Status::NoInfo);
  CHECK(statusAt(Clone3Call, 0, FrameTrust::Cfi) == UnwindResult::Status::NoInfo); // a return address, not a pc
  CHECK(statusAt(Clone3Call, 0, FrameTrust::Context, OS::Windows) == UnwindResult::Status::NoInfo);
}
