#include "stackwalk/core/RegularFile.h"

#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace stackwalk;

TEST_CASE("normalizedRecordedPath cannot climb out of a sysroot", "[regular-file]") {
  CHECK(normalizedRecordedPath("/usr/lib/libc.so.6") == "/usr/lib/libc.so.6");
  CHECK(normalizedRecordedPath("/../../../../etc/shadow") == "/etc/shadow");
  CHECK(normalizedRecordedPath("/lib/x86_64-linux-gnu/../../../../../etc/hostname") == "/etc/hostname");
  CHECK(normalizedRecordedPath("////proc//self/./exe") == "/proc/self/exe");
  CHECK(normalizedRecordedPath("relative/../../x") == "/x");
}

TEST_CASE("a deleted file's recorded path is looked up without the kernel's mark", "[regular-file]") {
  CHECK(normalizedRecordedPath("/usr/bin/prog (deleted)") == "/usr/bin/prog");
  CHECK(withoutDeletedMark("/usr/bin/prog (deleted)") == "/usr/bin/prog");
  CHECK(withoutDeletedMark("/usr/bin/prog") == "/usr/bin/prog");
  CHECK(withoutDeletedMark(" (deleted)") == " (deleted)"); // a name, not a mark
}

TEST_CASE("only regular files with content are read", "[regular-file]") {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("regular-file-test", dir));
  std::string fifo = std::string(dir) + "/fifo", file = std::string(dir) + "/file", empty = std::string(dir) + "/empty";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::ofstream(file) << "bytes";
  std::ofstream{empty};

  CHECK(isRegularFile(file));
  CHECK_FALSE(isRegularFile(fifo));
  CHECK_FALSE(isRegularFile(empty));
  CHECK_FALSE(isRegularFile(std::string(dir)));
  CHECK_FALSE(isRegularFile("/proc/self/environ")); // size 0, as every /proc file
  CHECK_FALSE(isRegularFile("/dev/zero"));

  auto read = readRegularFile(file);
  REQUIRE(read);
  CHECK((*read)->getBuffer() == "bytes");
  CHECK_FALSE(readRegularFile(fifo)); // returns at once: no writer is waited for
  CHECK_FALSE(readRegularFile("/proc/self/mem"));
  CHECK_FALSE(readRegularFile(empty));

  unlink(fifo.c_str()), unlink(file.c_str()), unlink(empty.c_str()), rmdir(dir.c_str());
}
