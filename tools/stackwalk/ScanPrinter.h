// --scan-from's report: the return-address candidates on a stack, as text or JSON.
#pragma once

#include "stackwalk/walk/ScanCandidates.h"

#include <ostream>

namespace stackwalk {

void printScanCandidates(std::ostream &out, const std::string &dumpPath, uint64_t from,
                         const std::vector<ScanCandidate> &candidates, bool json);

} // namespace stackwalk
