// --scan-from: the words on a stack, each with what it points into (WinDbg's
// dps), and which could be return addresses by the stack-scan unwinder's rule
// (inside an executable segment of a known module, right after a call), so a
// user can pick where to start a walk.
#pragma once

#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/walk/Report.h"

#include <vector>

namespace stackwalk {

struct StackWord {
  uint64_t slot = 0, value = 0;
  bool returnAddressCandidate = false;
  // The module, function and source the value points into: for a candidate,
  // those of the call before it; empty outside every module.
  ReportFrame where;
};

// The words from `from` up, at most `words` of them, stopping where the
// dump's memory ends; with `everyWord` false, only the candidates.
std::vector<StackWord> scanStack(const Target &target, uint64_t from, unsigned words, Symbolizer &symbolizer,
                                 bool everyWord);

} // namespace stackwalk
