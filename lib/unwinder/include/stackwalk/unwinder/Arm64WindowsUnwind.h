// Unwinding ARM64 code described by Windows ARM64 unwind data (Microsoft's
// "ARM64 exception handling"): a RUNTIME_FUNCTION's packed unwind data or its
// .xdata record (epilog scopes, unwind codes). The .NET runtime describes its
// JIT-compiled arm64 code the same way on every OS. LLVM can print these
// records (llvm-readobj's ARMWinEHPrinter) but has no unwinder, so this is ours;
// the algorithm is the one RtlVirtualUnwind documents: find whether the pc is
// in the prolog, an epilog or the body, skip the codes of the instructions not
// yet run, execute the rest, and return to the link register.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Win64FunctionTable.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace stackwalk {

// A function's unwind data in one form, packed data expanded into the codes it
// stands for (as RtlpExpandCompactToFull does).
struct Arm64UnwindData {
  uint32_t functionLength = 0; // in instructions
  std::vector<uint8_t> codes;  // unwind codes, prolog first (in unwind order)
  struct EpilogScope {
    uint32_t start = 0; // in instructions from the function's start
    uint32_t codeIndex = 0;
  };
  std::vector<EpilogScope> epilogs;
  // The E bit: one epilog, at the function's end, whose codes start here.
  std::optional<uint32_t> singleEpilogCodeIndex;
};

// Bytes of the unwind code that starts with `op`.
unsigned arm64CodeLength(uint8_t op);

// Where a pc lies in its function, as the unwind data tells: which codes run
// (from codeIndex on, the first `skipped` of them not, for the instructions
// of a prolog not yet run or of an epilog already run).
struct Arm64Position {
  enum class Part { Prolog, Epilog, Body } part = Part::Body;
  size_t codeIndex = 0;
  uint32_t skipped = 0;
};
Arm64Position arm64PositionOf(const Arm64UnwindData &data, uint32_t offset);

// The unwind data of a RUNTIME_FUNCTION whose RVAs are relative to imageBase.
llvm::Expected<Arm64UnwindData> readArm64UnwindData(const MemorySource &memory, uint64_t imageBase,
                                                    uint32_t unwindData);
// Packed unwind data (Flag 1, a function; Flag 2, a fragment without a prolog) as codes.
Arm64UnwindData expandPackedArm64(uint32_t unwindData);

// Unwinds `frame`, whose lookup address lies `offset` instructions into the
// function, to its caller. Registers the `abi` calls callee-saved survive.
llvm::Expected<UnwindResult> unwindArm64(const MemorySource &memory, const Arm64UnwindData &data, uint32_t offset,
                                         const Frame &frame, OS abi = OS::Windows);

// The caller of `function`'s frame, its unwind data read from imageBase.
llvm::Expected<UnwindResult> unwindArm64Windows(const MemorySource &memory, uint64_t imageBase,
                                                const RuntimeFunction &function, const Frame &frame,
                                                OS abi = OS::Windows);

// A frame with no RUNTIME_FUNCTION: a leaf, which returns to the link register.
UnwindResult unwindArm64Leaf(const Frame &frame);

} // namespace stackwalk
