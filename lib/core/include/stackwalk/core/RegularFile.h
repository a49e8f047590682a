// Files opened because a dump named them (module, debug and PDB files): only
// regular files with content. A FIFO must not block the walk, a device must
// not be read, and /proc's files (size 0: /proc/self/mem, /proc/self/environ)
// are no module of any dump.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorOr.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <string_view>

namespace stackwalk {

// Whether `path` is a regular file with content (symbolic links followed).
bool isRegularFile(const std::string &path);

// The file's bytes (mapped when large), opened without blocking and checked
// with fstat after opening, so what was checked is what is read.
llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> readRegularFile(const std::string &path);

// A path a dump recorded, as a lookup key: one leading slash, no "." or "..",
// no repeated separators ("/../../etc/x" is "/etc/x", "////proc" is "/proc"),
// so it cannot climb out of a sysroot it is joined to; without the kernel's
// mark of a deleted file (withoutDeletedMark).
std::string normalizedRecordedPath(const std::string &path);

// The path of a file deleted or replaced since it was mapped (a program
// upgraded while it ran), as /proc/PID/maps and a core's NT_FILE note give it,
// ends in " (deleted)"; the file's own path is without it.
std::string_view withoutDeletedMark(std::string_view path);
inline bool markedDeleted(std::string_view path) { return withoutDeletedMark(path).size() != path.size(); }

} // namespace stackwalk
