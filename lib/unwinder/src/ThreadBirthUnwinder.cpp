#include "stackwalk/unwinder/ThreadBirthUnwinder.h"

#include "stackwalk/core/Target.h"

#include "llvm/Support/Endian.h"

#include <array>

namespace stackwalk {
namespace {

// The system call number just before `ip`, when the code there is `mov eax,
// NR; syscall`, as glibc's and Go's x86-64 clone load it.
std::optional<uint32_t> x86_64SyscallBefore(const Target &target, uint64_t ip) {
  std::array<uint8_t, 7> code{};
  if (ip < code.size() || !target.read(ip - code.size(), code)) return std::nullopt;
  if (code[0] != 0xb8 || code[5] != 0x0f || code[6] != 0x05) return std::nullopt; // mov eax, imm32; syscall
  return llvm::support::endian::read32le(code.data() + 1);
}

// The same for arm64: `mov x8, #NR` (or w8) then `svc #0`, as glibc's, musl's,
// bionic's and Go's clone load it.
std::optional<uint32_t> arm64SyscallBefore(const Target &target, uint64_t ip) {
  std::array<uint8_t, 8> code{};
  if (ip < code.size() || !target.read(ip - code.size(), code)) return std::nullopt;
  uint32_t move = llvm::support::endian::read32le(code.data());
  uint32_t call = llvm::support::endian::read32le(code.data() + 4);
  constexpr uint32_t Svc0 = 0xd4000001, MovzMask = 0x7fe0001f, MovzW8 = 0x52800008; // sf (bit 31) either way
  if (call != Svc0 || (move & MovzMask) != MovzW8) return std::nullopt;
  return (move >> 5) & 0xffff;
}

// What tells a new thread on an architecture: clone's and clone3's system call
// numbers; the registers holding the call's result (0 in the new thread) and
// clone's new-stack argument, which the call leaves as it was (0 for a fork,
// whose child runs on a copy of its parent's stack), by DWARF number; and how
// the code before the pc reads a system call's number.
struct CloneAbi {
  uint32_t clone, clone3;
  unsigned result, newStack;
  std::optional<uint32_t> (*syscallBefore)(const Target &, uint64_t ip);
};
constexpr CloneAbi X86_64Clone{56, 435, 0 /* rax */, 4 /* rsi */, x86_64SyscallBefore};
constexpr CloneAbi Arm64Clone{220, 435, 0 /* x0 */, 1 /* x1 */, arm64SyscallBefore};

const CloneAbi *cloneAbi(const Target &target) {
  if (target.os() != OS::Linux && target.os() != OS::Unknown) return nullptr;
  if (target.arch() == Arch::X86_64) return &X86_64Clone;
  if (target.arch() == Arch::Arm64) return &Arm64Clone;
  return nullptr;
}

} // namespace

UnwindResult ThreadBirthUnwinder::unwind(const Frame &frame, const Target &target) {
  const CloneAbi *abi = cloneAbi(target);
  // Only a thread's recorded pc can be its first instruction.
  if (!abi || frame.trust != FrameTrust::Context || !frame.ipIsExact) return UnwindResult::noInfo("");
  std::optional<uint32_t> number = abi->syscallBefore(target, frame.ip);
  bool newThread = frame.regs.get(abi->result) == 0 &&
                   ((number == abi->clone && frame.regs.get(abi->newStack).value_or(0) != 0) || number == abi->clone3);
  if (!newThread) return UnwindResult::noInfo(""); // not a thread's first instruction
  return UnwindResult::endOfStack(
      "a new thread at its first instruction: clone returned 0 in it, and nothing called it");
}

} // namespace stackwalk
