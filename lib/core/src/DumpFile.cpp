#include "stackwalk/core/DumpFile.h"

#include "stackwalk/core/Fail.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stackwalk {

llvm::Expected<std::shared_ptr<DumpFile>> DumpFile::open(const std::string &path) {
  if (path == "-") {
    auto bytes = llvm::MemoryBuffer::getSTDIN();
    if (!bytes) return fail("cannot read standard input: " + bytes.getError().message());
    return std::make_shared<DumpFile>(std::move(*bytes));
  }
  int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (descriptor < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
  struct stat status;
  bool regular = fstat(descriptor, &status) == 0 && S_ISREG(status.st_mode);
  // A regular file is mapped at the size fstat gave, so what was measured is what is read.
  auto bytes = llvm::MemoryBuffer::getOpenFile(descriptor, path, regular ? uint64_t(status.st_size) : uint64_t(-1),
                                               /*RequiresNullTerminator=*/false);
  if (!bytes) {
    ::close(descriptor);
    return fail("cannot open " + path + ": " + bytes.getError().message());
  }
  if (!regular) {
    ::close(descriptor); // read whole: nothing to read again
    descriptor = -1;
  }
  return std::make_shared<DumpFile>(std::move(*bytes), descriptor);
}

DumpFile::DumpFile(std::unique_ptr<llvm::MemoryBuffer> bytes, int descriptor)
    : bytes_(std::move(bytes)), descriptor_(descriptor) {}

DumpFile::~DumpFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

bool DumpFile::copy(uint64_t offset, std::span<uint8_t> out) const {
  if (offset > bytes_->getBufferSize() || out.size() > bytes_->getBufferSize() - offset) return false;
  if (descriptor_ < 0) {
    std::memcpy(out.data(), bytes_->getBufferStart() + offset, out.size());
    return true;
  }
  if (out.size() >= DirectReadSize) return readFully(offset, out);
  std::lock_guard lock(mutex_);
  for (size_t done = 0; done < out.size();) {
    uint64_t at = offset + done;
    const Block *block = blockAt(at / BlockSize);
    if (!block) return false;
    size_t within = at % BlockSize, n = std::min(out.size() - done, BlockSize - within);
    std::memcpy(out.data() + done, block->data() + within, n);
    done += n;
  }
  return true;
}

bool DumpFile::readFully(uint64_t offset, std::span<uint8_t> out) const {
  for (size_t done = 0; done < out.size();) {
    ssize_t n = pread(descriptor_, out.data() + done, out.size() - done, off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

const DumpFile::Block *DumpFile::blockAt(uint64_t index) const {
  if (auto found = blocks_.find(index); found != blocks_.end()) return found->second.get();
  uint64_t start = index * BlockSize;
  auto block = std::make_unique<Block>();
  if (!readFully(start, std::span(block->data(), std::min<uint64_t>(BlockSize, bytes_->getBufferSize() - start))))
    return nullptr;
  if (blocks_.size() >= MaxBlocks) blocks_.clear();
  return blocks_.emplace(index, std::move(block)).first->second.get();
}

} // namespace stackwalk
