// A thread context as Breakpad writes it where it differs from Windows'
// CONTEXT: its old arm64 layout (MDRawContextARM64_Old: ContextFlags with bit
// 31 set, 796 bytes), which Breakpad's Linux and Android writers used before
// they adopted Windows' CONTEXT_ARM64, and which microdumps still carry.
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

// Any context a minidump or microdump holds for `arch`: Breakpad's old arm64
// layout, else Windows' CONTEXT.
llvm::Expected<RegisterFile> readThreadContext(Arch arch, std::span<const uint8_t> bytes);

} // namespace stackwalk::minidump
