// --runtime-info: what stackwalk found of a dump's .NET runtime.
#pragma once

#include "stackwalk/core/Target.h"

#include <ostream>
#include <string>

namespace stackwalk {

void printRuntimeInfo(std::ostream &out, const std::string &dumpPath, const Target &target, bool json);

} // namespace stackwalk
