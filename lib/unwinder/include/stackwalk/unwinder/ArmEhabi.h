// ARM's exception-handling tables (the EHABI, "Exception Handling ABI for the
// ARM Architecture", sections 6-10): .ARM.exidx holds one entry per function,
// sorted, whose second word is EXIDX_CANTUNWIND, the function's unwind
// instructions inline (compact model 0), or a pointer into .ARM.extab; there
// an entry holds compact-model 0, 1 or 2 instructions, or a generic
// personality routine followed by instructions in model 1's form (what GCC's
// __gxx_personality_v0 uses). The instructions pop registers and move the
// virtual stack pointer; pc is the popped r15, else lr.
//
// LLVM reads these tables only to dump them (llvm-readobj's ARMEHABIPrinter)
// and libunwind's reader is not a library Debian packages for this use, so
// this reader is ours.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk {

// What a function's exidx entry says.
struct ArmUnwindEntry {
  uint64_t functionStart = 0;
  bool cannotUnwind = false;     // EXIDX_CANTUNWIND
  std::vector<uint8_t> opcodes;  // in execution order; "finish" implied at the end
  std::string personality;       // "compact model 0/1/2", or "generic personality at 0x..."
};

// The entry of the table [tableAddress, tableAddress + tableSize) (runtime
// addresses, read through `memory`) for the function containing `address`;
// nullopt when none covers it or the table is unreadable. Bounded: at most
// 2^20 entries are searched, 64 extab words read.
std::optional<ArmUnwindEntry> findArmUnwindEntry(const MemorySource &memory, uint64_t tableAddress,
                                                 uint64_t tableSize, uint64_t address);

// Executes unwind instructions on a frame's registers (r0-r15 as DWARF
// numbers them): the caller's registers (those popped, and the callee-saved
// r4-r11 that were not) with sp the final virtual stack pointer and pc the
// popped r15, else lr. An error names the instruction that
// refused, is reserved, or read memory the dump lacks.
llvm::Expected<RegisterFile> executeArmUnwind(std::span<const uint8_t> opcodes, const RegisterFile &callee,
                                              const MemorySource &memory);

// The instructions in words, one per line ("0xa8 pop {r4, lr}"), for --unwind-info.
std::vector<std::string> describeArmUnwind(std::span<const uint8_t> opcodes);

} // namespace stackwalk
