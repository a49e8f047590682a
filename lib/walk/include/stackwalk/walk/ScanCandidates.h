// --scan-from: the words on a stack that could be return addresses, by the
// stack-scan unwinder's rule (inside an executable segment of a known module,
// right after a call), so a user can pick where to start a walk.
#pragma once

#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/walk/Report.h"

#include <vector>

namespace stackwalk {

struct ScanCandidate {
  uint64_t slot = 0, value = 0;
  ReportFrame where; // module, function and source of the return address
};

std::vector<ScanCandidate> scanCandidates(const Target &target, uint64_t from, unsigned words, Symbolizer &symbolizer);

} // namespace stackwalk
