#include "stackwalk/unwinder/ThreadBirthUnwinder.h"

#include "stackwalk/core/Target.h"

#include <array>

namespace stackwalk {
namespace {

// x86-64's system call numbers of clone and clone3.
constexpr uint32_t Clone = 56;
constexpr uint32_t Clone3 = 435;

// Whether the 7 bytes before `ip` are `mov eax, NR; syscall` for clone or
// clone3, as glibc's clone.S and clone3.S load the number just before it.
bool followsCloneSyscall(const Target &target, uint64_t ip) {
  std::array<uint8_t, 7> code{};
  if (ip < code.size() || !target.read(ip - code.size(), code)) return false;
  if (code[0] != 0xb8 || code[5] != 0x0f || code[6] != 0x05) return false; // mov eax, imm32; syscall
  uint32_t number = code[1] | code[2] << 8 | code[3] << 16 | uint32_t(code[4]) << 24;
  return number == Clone || number == Clone3;
}

} // namespace

UnwindResult ThreadBirthUnwinder::unwind(const Frame &frame, const Target &target) {
  constexpr unsigned Rax = 0; // DWARF's number
  if (target.arch() != Arch::X86_64 || target.os() != OS::Linux || frame.trust != FrameTrust::Context ||
      !frame.ipIsExact || frame.regs.get(Rax) != 0 || !followsCloneSyscall(target, frame.ip))
    return UnwindResult::noInfo(""); // not a thread's first instruction
  return UnwindResult::endOfStack(
      "a new thread at its first instruction: clone returned 0 in it, and nothing called it");
}

} // namespace stackwalk
