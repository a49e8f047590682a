// A thread context as Breakpad writes it where it differs from Windows'
// CONTEXT: its old arm64 layout (MDRawContextARM64_Old: ContextFlags with bit
// 31 set, 796 bytes), which Breakpad's Linux and Android writers used before
// they adopted Windows' CONTEXT_ARM64, and which microdumps still carry; and
// its 32-bit ARM layout (MDRawContextARM), which Windows' CONTEXT_ARM is not
// (both are read, told apart by their ContextFlags).
#pragma once

#include "stackwalk/core/Registers.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <span>

namespace stackwalk::minidump {

// Whether `bytes` are an old-layout Breakpad arm64 context.
bool isBreakpadArm64OldContext(std::span<const uint8_t> bytes);

// Its registers: a 64-bit context_flags, then x0-x30, sp and pc, then cpsr.
llvm::Expected<RegisterFile> fromBreakpadArm64OldContext(std::span<const uint8_t> bytes);

// Breakpad's ARM context: context_flags, r0-r15, cpsr (then the VFP state).
llvm::Expected<RegisterFile> fromBreakpadArmContext(std::span<const uint8_t> bytes);

// Whether a 32-bit ARM context is Windows' CONTEXT_ARM (ContextFlags with
// 0x00200000) rather than Breakpad's (0x40000000, or 0x40 in its old writers).
bool isWindowsArmContext(std::span<const uint8_t> bytes);

// Any context a minidump or microdump holds for `arch`: Breakpad's ARM or old
// arm64 layout, else Windows' CONTEXT.
llvm::Expected<RegisterFile> readThreadContext(Arch arch, std::span<const uint8_t> bytes);

} // namespace stackwalk::minidump
