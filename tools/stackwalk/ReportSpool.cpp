#include "ReportSpool.h"

#include <cstdlib>
#include <unistd.h>
#include <utility>

namespace stackwalk {
namespace {

// A temporary file no one else can open: created under $TMPDIR (else /tmp) and
// unlinked at once. nullptr when none can be made; the report then stays in memory.
std::FILE *anonymousFile() {
  const char *dir = std::getenv("TMPDIR");
  std::string name = std::string(dir && *dir ? dir : "/tmp") + "/stackwalk-report-XXXXXX";
  int fd = mkstemp(name.data());
  if (fd < 0) return nullptr;
  unlink(name.c_str());
  std::FILE *file = fdopen(fd, "w+b");
  if (!file) close(fd);
  return file;
}

} // namespace

ReportSpool::ReportSpool(ReportSpool &&other) noexcept
    : memory_(std::move(other.memory_)), file_(std::exchange(other.file_, nullptr)) {}

ReportSpool &ReportSpool::operator=(ReportSpool &&other) noexcept {
  if (this != &other) {
    if (file_) std::fclose(file_);
    memory_ = std::move(other.memory_);
    file_ = std::exchange(other.file_, nullptr);
  }
  return *this;
}

ReportSpool::~ReportSpool() {
  if (file_) std::fclose(file_);
}

void ReportSpool::append(std::string_view bytes) {
  if (!file_ && memory_.size() + bytes.size() > InMemoryBytes) file_ = anonymousFile();
  if (file_) {
    size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file_);
    if (written == bytes.size()) return;
    // The disk is full: memory is the last resort, the order kept.
    std::string spilled;
    readFile([&](std::string_view chunk) { spilled.append(chunk); });
    memory_ += spilled;
    bytes.remove_prefix(written);
  }
  memory_.append(bytes);
}

void ReportSpool::writeTo(std::ostream &out) {
  out << memory_;
  memory_.clear();
  readFile([&](std::string_view chunk) { out.write(chunk.data(), std::streamsize(chunk.size())); });
}

void ReportSpool::readFile(const std::function<void(std::string_view)> &consume) {
  if (!file_) return;
  std::rewind(file_);
  char buffer[1 << 16];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, file_)) consume(std::string_view(buffer, n));
  std::fclose(std::exchange(file_, nullptr));
}

} // namespace stackwalk
