// --runtime-info: what stackwalk found of a dump's .NET runtime.
#pragma once

#include "Format.h"

#include "stackwalk/walk/ManagedRuntime.h"

#include "llvm/Support/Error.h"

#include <ostream>
#include <string>

namespace stackwalk {

void printRuntimeInfo(std::ostream &out, const std::string &dumpPath, llvm::Expected<RuntimeDetails> runtime,
                      JsonForm json);

} // namespace stackwalk
