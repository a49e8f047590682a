// --unwind-info's report: the unwind data that governs one address, as text.
#pragma once

#include "stackwalk/walk/UnwindInfo.h"

#include <ostream>

namespace stackwalk {

void printUnwindInfo(std::ostream &out, const std::string &dumpPath, const UnwindInfoReport &report);

} // namespace stackwalk
