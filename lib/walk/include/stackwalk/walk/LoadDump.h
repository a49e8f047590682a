// A dump of either format, by its first bytes: an ELF core or a minidump.
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace stackwalk {

// From a file; "-" is standard input, and a pipe is read whole.
llvm::Expected<std::unique_ptr<Target>> loadDump(const std::string &path);
llvm::Expected<std::unique_ptr<Target>> loadDump(std::shared_ptr<const DumpFile> file);

} // namespace stackwalk
