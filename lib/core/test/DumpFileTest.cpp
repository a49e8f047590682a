#include "stackwalk/core/DumpFile.h"

#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <fstream>
#include <unistd.h>
#include <vector>

using namespace stackwalk;

namespace {

// A file whose every 4-byte word holds its own offset, so a copy shows where it came from.
struct CountingFile {
  std::string path;
  explicit CountingFile(size_t words) {
    llvm::SmallString<128> name;
    REQUIRE(!llvm::sys::fs::createTemporaryFile("dump-file-test", "bin", name));
    path = std::string(name);
    std::vector<uint32_t> contents(words);
    for (size_t i = 0; i < words; ++i) contents[i] = uint32_t(4 * i);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(contents.data()), 4 * words);
  }
  ~CountingFile() { std::remove(path.c_str()); }
};

std::optional<uint32_t> wordAt(const DumpFile &file, uint64_t offset) {
  uint32_t word;
  if (!file.copy(offset, {reinterpret_cast<uint8_t *>(&word), 4})) return std::nullopt;
  return word;
}

// Whether the page holding `address` is mapped into this process (/proc/self/pagemap's bit 63).
bool pageMapped(const void *address) {
  int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  REQUIRE(pagemap >= 0);
  uint64_t entry = 0;
  off_t at = off_t(reinterpret_cast<uintptr_t>(address) / 4096 * 8);
  REQUIRE(pread(pagemap, &entry, 8, at) == 8);
  close(pagemap);
  return entry >> 63;
}

} // namespace

TEST_CASE("DumpFile copies any range of the file, across blocks and at its end", "[dump-file]") {
  constexpr size_t Words = 5 * DumpFile::BlockSize / 4 + 25; // five blocks and 100 bytes
  CountingFile counting(Words);
  auto file = DumpFile::open(counting.path);
  REQUIRE(bool(file));
  const DumpFile &dump = **file;
  REQUIRE(dump.bytes().size() == 4 * Words);
  CHECK(wordAt(dump, 0) == 0u);
  std::vector<uint8_t> across(8), expected(8);
  REQUIRE(dump.copy(DumpFile::BlockSize - 4, across)); // the last word of block 0, the first of block 1
  std::memcpy(expected.data(), dump.bytes().data() + DumpFile::BlockSize - 4, 8);
  CHECK(across == expected);
  CHECK(wordAt(dump, 4 * (Words - 1)) == uint32_t(4 * (Words - 1))); // in the partial last block
  CHECK(wordAt(dump, 4 * Words - 2) == std::nullopt);                // runs past the end
  CHECK(wordAt(dump, UINT64_MAX - 1) == std::nullopt);

  std::vector<uint8_t> direct(DumpFile::DirectReadSize); // long enough to bypass the blocks
  REQUIRE(dump.copy(8, direct));
  CHECK(std::equal(direct.begin(), direct.end(), dump.bytes().begin() + 8));
}

TEST_CASE("DumpFile's copies leave the mapping untouched", "[dump-file]") {
  CountingFile counting(16 * DumpFile::BlockSize / 4); // 64 KiB: LLVM maps a file this large
  auto file = DumpFile::open(counting.path);
  REQUIRE(bool(file));
  const uint8_t *page = (*file)->bytes().data() + 8 * DumpFile::BlockSize;
  CHECK(wordAt(**file, 8 * DumpFile::BlockSize + 12) == uint32_t(8 * DumpFile::BlockSize + 12));
  CHECK_FALSE(pageMapped(page));
}

TEST_CASE("DumpFile fails a copy the shortened file no longer holds", "[dump-file]") {
  CountingFile counting(4 * DumpFile::BlockSize / 4);
  auto file = DumpFile::open(counting.path);
  REQUIRE(bool(file));
  REQUIRE(truncate(counting.path.c_str(), DumpFile::BlockSize) == 0);
  CHECK(wordAt(**file, 16) == 16u);
  CHECK(wordAt(**file, 2 * DumpFile::BlockSize) == std::nullopt); // read, not mapped: no SIGBUS
}

TEST_CASE("DumpFile reads right after its cache of blocks starts again", "[dump-file]") {
  constexpr size_t Blocks = DumpFile::MaxBlocks + 10;
  CountingFile counting(Blocks * DumpFile::BlockSize / 4);
  auto file = DumpFile::open(counting.path);
  REQUIRE(bool(file));
  size_t right = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (uint64_t block = 0; block < Blocks; ++block)
      right += wordAt(**file, block * DumpFile::BlockSize + 4) == uint32_t(block * DumpFile::BlockSize + 4);
  CHECK(right == 2 * Blocks);
}

TEST_CASE("DumpFile reads what is not a regular file whole, and bytes in memory", "[dump-file]") {
  auto empty = DumpFile::open("/dev/null");
  REQUIRE(bool(empty));
  CHECK((*empty)->bytes().empty());
  CHECK(wordAt(**empty, 0) == std::nullopt);
  auto missing = DumpFile::open("/nonexistent/dump");
  CHECK(llvm::toString(missing.takeError()) == "cannot open /nonexistent/dump: No such file or directory");

  DumpFile inMemory(llvm::MemoryBuffer::getMemBufferCopy("0123456789"));
  std::vector<uint8_t> out(4);
  REQUIRE(inMemory.copy(6, out));
  CHECK(out == std::vector<uint8_t>{'6', '7', '8', '9'});
  CHECK_FALSE(inMemory.copy(7, out));
}
