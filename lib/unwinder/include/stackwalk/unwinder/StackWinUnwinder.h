// Unwinds 32-bit x86 Windows frames with the STACK WIN records of a module's
// Breakpad symbol file (what dump_syms kept of the PDB's FPO and FrameData
// streams), else with those streams of the module's PDB. Breakpad's x86 stackwalker is the reference for what the records
// mean where they are vague: the return address is searched for at most three
// words above where the sizes put it (a stack aligned by the prolog), a return
// address outside every module is searched for further up, and a caller's ebp
// that does not point at readable memory is searched for in the callee's
// saved-register area.
#pragma once

#include "stackwalk/core/PdbFrameData.h"
#include "stackwalk/core/StackWalker.h"

#include <map>
#include <memory>

namespace stackwalk {

class StackWinUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::UnwindInfo; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  const PdbFrameData *pdbFrameData(const Module &module);
  std::optional<WindowsFrameInfo> frameInfo(const Module &module, uint64_t offset);
  bool isReturnAddress(const Target &target, uint64_t value);
  // Each PDB's frame data, read when a frame first needs it; null for one that could not be read.
  std::map<std::string, std::unique_ptr<PdbFrameData>> pdbs_;
};

} // namespace stackwalk
