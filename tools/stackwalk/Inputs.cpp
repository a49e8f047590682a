#include "Inputs.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace stackwalk {

llvm::Expected<std::vector<std::string>> readPathList(const std::string &file) {
  auto text = file == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!text) return fail("--from " + file + ": " + text.getError().message());
  std::vector<std::string> paths;
  llvm::SmallVector<llvm::StringRef> lines;
  (*text)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.rtrim("\r");
    if (!line.trim().empty()) paths.push_back(line.str());
  }
  return paths;
}

llvm::Error checkGivenPath(const std::string &option, const std::string &path, bool directory) {
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status)) return fail(option + " " + path + ": " + error.message());
  bool isDirectory = llvm::sys::fs::is_directory(status);
  if (directory && !isDirectory) return fail(option + " " + path + ": not a directory");
  if (!directory && isDirectory) return fail(option + " " + path + ": a directory, not a file");
  if (::access(path.c_str(), directory ? R_OK | X_OK : R_OK) != 0)
    return fail(option + " " + path + ": " + std::strerror(errno));
  return llvm::Error::success();
}

} // namespace stackwalk
