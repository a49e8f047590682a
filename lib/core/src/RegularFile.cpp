#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stackwalk {

bool isRegularFile(const std::string &path) {
  struct stat status;
  return !path.empty() && stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0;
}

llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> readRegularFile(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::error_code(errno, std::generic_category());
  struct stat status;
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_size <= 0) {
    close(fd);
    return std::make_error_code(std::errc::invalid_argument);
  }
  auto buffer = llvm::MemoryBuffer::getOpenFile(fd, path, uint64_t(status.st_size), /*RequiresNullTerminator=*/false);
  close(fd); // a mapping outlives its descriptor
  return buffer;
}

std::string normalizedRecordedPath(const std::string &path) {
  llvm::SmallString<256> normal("/");
  normal += llvm::StringRef(withoutDeletedMark(path)).ltrim('/');
  llvm::sys::path::remove_dots(normal, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
  return std::string(normal);
}

std::string_view withoutDeletedMark(std::string_view path) {
  constexpr std::string_view Mark = " (deleted)";
  if (path.size() > Mark.size() && path.ends_with(Mark)) path.remove_suffix(Mark.size());
  return path;
}

} // namespace stackwalk
