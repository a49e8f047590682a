// Windows, Breakpad and Crashpad minidumps -> Target.
#pragma once

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/core/Target.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <span>
#include <string>

namespace stackwalk {

// True when the bytes start with the minidump signature "MDMP".
bool looksLikeMinidump(std::span<const uint8_t> head);

// Reads the streams: system info, threads and their contexts, thread names,
// modules (with CodeView identities), unloaded modules, memory (MemoryList and
// Memory64List), the exception, misc info, memory info, Breakpad's Linux
// streams and Crashpad's info. A damaged stream is skipped with a warning; only
// a file without a usable header and directory fails.
llvm::Expected<std::unique_ptr<Target>> loadMinidump(const std::string &path);
llvm::Expected<std::unique_ptr<Target>> loadMinidump(std::shared_ptr<const DumpFile> file);

} // namespace stackwalk
