// Unwinds with the STACK CFI records of a module's Breakpad symbol file
// (Module::symbolFile): what dump_syms kept of the module's DWARF CFI, for
// modules whose file is not at hand.
#pragma once

#include "stackwalk/core/StackWalker.h"

namespace stackwalk {

class SymbolFileCfiUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::Cfi; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

} // namespace stackwalk
