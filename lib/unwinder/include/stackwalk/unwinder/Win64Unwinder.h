// Unwinding Windows x64 and ARM64 code of PE modules: the RUNTIME_FUNCTION
// covering the pc comes from the module's function table (.pdata), read
// through the target (dump memory, or the module file overlaid), and its
// unwind data is the machine's (Win64Unwind.h, Arm64WindowsUnwind.h).
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Win64FunctionTable.h"

#include <map>
#include <optional>
#include <string>

namespace stackwalk {

class Win64Unwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  // A module's function table, from its PE headers, or why it has none;
  // cached per base.
  struct Table {
    std::optional<Win64FunctionTable> table;
    std::string why;
  };
  const Table &functionTable(const Module &module, const Target &target);

  std::map<uint64_t, Table> tables_; // by module base
};

} // namespace stackwalk
