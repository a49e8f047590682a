// Unwinding Windows x64 and ARM64 code of PE modules: the RUNTIME_FUNCTION
// covering the pc comes from the module's function table (.pdata), read
// through the target (dump memory, or the module file overlaid), and its
// unwind data is the machine's (Win64Unwind.h, Arm64WindowsUnwind.h).
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Win64FunctionTable.h"

#include <map>
#include <optional>

namespace stackwalk {

class Win64Unwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  // The module's function table, from its PE headers; cached per base.
  const std::optional<Win64FunctionTable> &functionTable(const Module &module, const Target &target);

  std::map<uint64_t, std::optional<Win64FunctionTable>> tables_;
};

} // namespace stackwalk
