// Unwinds 32-bit x86 Windows frames with the STACK WIN records of a module's
// Breakpad symbol file: what dump_syms kept of the PDB's FPO and FrameData
// streams. Breakpad's x86 stackwalker is the reference for what the records
// mean where they are vague: the return address is searched for at most three
// words above where the sizes put it (a stack aligned by the prolog), a return
// address outside every module is searched for further up, and a caller's ebp
// that does not point at readable memory is searched for in the callee's
// saved-register area.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class StackWinUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

} // namespace stackwalk
