// Conversion between a RegisterFile and the Windows CONTEXT record layout: what
// minidumps store, what the .NET runtime's GetRawContext yields, and what
// --raw-context prints. Offsets are Windows' public CONTEXT definitions.
#pragma once

#include "stackwalk/core/FxsaveArea.h"
#include "stackwalk/core/Registers.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

// Size of a CONTEXT for the architecture (x86-64 0x4d0, arm64 0x390, x86 0x2cc).
size_t windowsContextSize(Arch arch);

// Encodes the known registers; ContextFlags says which groups are present.
std::vector<uint8_t> toWindowsContext(const RegisterFile &regs);

// Decodes a CONTEXT. Registers of a group that ContextFlags does not claim stay
// unknown. Longer records (XSTATE) are accepted; shorter ones are an error.
llvm::Expected<RegisterFile> fromWindowsContext(Arch arch,
                                                std::span<const uint8_t> bytes);

// An x86-64 CONTEXT's x87 and SSE registers (FltSave, XMM_SAVE_AREA32 at
// 0x100: the FXSAVE layout), when ContextFlags claims them
// (CONTEXT_FLOATING_POINT); nullopt otherwise and for other architectures.
std::optional<FxsaveArea> fpStateFromWindowsContext(Arch arch, std::span<const uint8_t> bytes);

} // namespace stackwalk
