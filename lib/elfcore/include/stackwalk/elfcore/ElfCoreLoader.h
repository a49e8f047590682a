// Linux ELF core files -> Target.
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <span>
#include <string>

namespace stackwalk {

// True when the bytes start like an ELF core (ET_CORE).
bool looksLikeElfCore(std::span<const uint8_t> head);

// Reads the core's program headers and notes: threads and registers, the
// process, the crash, memory, and the modules (from NT_FILE, or from the
// dynamic linker's link map when NT_FILE is missing). Module files are not
// looked for here: that is the ModuleResolver's job. A damaged core loads as
// far as it can, with warnings; only a file that is not a usable core fails.
llvm::Expected<std::unique_ptr<Target>> loadElfCore(const std::string &path);
llvm::Expected<std::unique_ptr<Target>> loadElfCore(std::shared_ptr<const DumpFile> file);

} // namespace stackwalk
