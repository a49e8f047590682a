// Reading Windows x64 UNWIND_INFO from target memory: shared by the unwinder
// (Win64Unwind.cpp) and the description --unwind-info prints
// (Win64UnwindDescription.cpp). Layout: Microsoft's "x64 exception handling".
#pragma once

#include "stackwalk/core/Memory.h"
#include "stackwalk/core/Win64FunctionTable.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/Win64EH.h"

#include <cstdint>
#include <vector>

namespace stackwalk {

constexpr unsigned ChainLimit = 32;         // chained or indirect entries followed at most
constexpr uint8_t UOP_SetFPRegLarge = 11;   // CoreCLR on Unix only

// UNWIND_INFO with its codes.
struct UnwindInfoView {
  uint64_t address = 0; // where it was read
  uint8_t version = 0, flags = 0, prologSize = 0, frameRegister = 0, frameOffset = 0;
  std::vector<uint16_t> codes; // raw slots
  uint8_t codeOffset(size_t i) const { return uint8_t(codes[i]); }
  uint8_t op(size_t i) const { return uint8_t(codes[i] >> 8) & 0xf; }
  uint8_t opInfo(size_t i) const { return uint8_t(codes[i] >> 12); }
  uint32_t slot32(size_t i) const { return uint32_t(codes[i]) | uint32_t(codes[i + 1]) << 16; }
  // Where what follows the codes starts: the chained RUNTIME_FUNCTION or the
  // handler's RVA (the codes are padded to an even count).
  uint64_t trailerAddress() const { return address + 4 + ((codes.size() + 1) & ~size_t(1)) * 2; }
};

// Slots an unwind code takes, with its operation and OpInfo.
unsigned slotsOf(uint8_t op, uint8_t opInfo);

// The UNWIND_INFO of `function`, its codes checked to fit their count.
llvm::Expected<UnwindInfoView> readUnwindInfo(const MemorySource &memory, uint64_t imageBase,
                                              const RuntimeFunction &function);

// The RUNTIME_FUNCTION a chained UNWIND_INFO continues with.
llvm::Expected<RuntimeFunction> chainedFunction(const MemorySource &memory, const UnwindInfoView &info);

// The entry an indirect RUNTIME_FUNCTION (unwind data RVA with bit 0 set)
// points at, followed to a direct one; `function` itself when it is direct.
llvm::Expected<RuntimeFunction> resolveIndirect(const MemorySource &memory, uint64_t imageBase,
                                                RuntimeFunction function);

} // namespace stackwalk
