// Unwinds 32-bit ARM code by its module's .ARM.exidx table (ArmEhabi.h): what
// ARM binaries carry instead of .eh_frame, kept by strip, so it covers code
// whose DWARF CFI is gone. gdb's arm-tdep.c reads it too, after DWARF CFI.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace stackwalk {

class ArmExidxUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
  // --unwind-info: the entry for an address, and its instructions in words.
  static llvm::Expected<std::vector<std::string>> describe(const Module &module, uint64_t address,
                                                           const Target &target);
};

} // namespace stackwalk
