// A thread's x87 and SSE registers in the FXSAVE layout (Intel SDM vol. 1,
// 10.5.1), as x86-64 Linux keeps them (NT_PRFPREG in a core,
// PTRACE_GETREGSET of a live thread: user_fpregs_struct), and the upper
// halves of the AVX registers from an XSAVE image in the standard format
// (NT_X86_XSTATE; SDM vol. 1, 13.4). Only a thread's context has them: no
// unwinder says where a caller's are. AVX-512's registers are not read.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk {

struct FxsaveArea {
  static constexpr size_t Size = 512;

  uint16_t fcw = 0, fsw = 0, fop = 0; // control, status, last opcode
  uint32_t mxcsr = 0;
  std::array<std::array<uint8_t, 10>, 8> st{};  // ST(0)-ST(7), 80 bits each, in stack order
  std::array<std::array<uint8_t, 16>, 16> xmm{}; // xmm0-xmm15
  // ymm0-ymm15's upper 128 bits, when an XSAVE image was read.
  std::optional<std::array<std::array<uint8_t, 16>, 16>> ymmUpper;

  // nullopt when there are fewer than 512 bytes.
  static std::optional<FxsaveArea> parse(std::span<const uint8_t> bytes);
  // Takes the AVX state from an XSAVE image: zeros when its XSTATE_BV says
  // the AVX registers are in their initial state. False (nothing taken) for
  // an image too short or in the compacted format.
  bool addXsave(std::span<const uint8_t> bytes);

  // By gdb's names (fctrl, fstat, fop, mxcsr, st0-st7, xmm0-xmm15, then
  // ymm0-ymm15 when known), each as hex digits of the whole register, most
  // significant first ("0x" prefixed).
  std::vector<std::pair<std::string, std::string>> registers() const;
};

} // namespace stackwalk
