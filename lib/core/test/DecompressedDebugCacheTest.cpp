#include "stackwalk/core/DecompressedDebugCache.h"

#include "CompressedElf.h"

#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <chrono>

using namespace stackwalk;
using namespace stackwalk::test;


TEST_CASE("a compressed file's twin holds its sections decompressed, kept in the cache and checked on each use") {
  TempDir dir;
  const std::string text = std::string(5000, 'x') + "the strings of the unit";
  auto file = compressedFile(dir.file("lib.debug"), text);
  CHECK(debugStr(*file) != text); // compressed
  DecompressedDebugCache cache(dir.file("cache"));
  std::string entry = cache.entryPath(llvm::arrayRefFromStringRef(file->object().getData()));

  auto twin = cache.twin(*file, UINT64_MAX);
  REQUIRE(twin);
  CHECK(debugStr(*twin) == text);
  CHECK(twin->path() == entry);
  CHECK(llvm::sys::fs::exists(entry));

  SECTION("a second cache on the directory uses the entry") {
    auto again = DecompressedDebugCache(dir.file("cache")).twin(*file, UINT64_MAX);
    REQUIRE(again);
    CHECK(debugStr(*again) == text);
  }
  SECTION("a corrupt or truncated entry is made again, never read") {
    twin.reset();
    const std::string whole = contents(entry);
    for (bool truncate : {false, true}) {
      damage(entry, truncate);
      REQUIRE(contents(entry) != whole);
      auto remade = cache.twin(*file, UINT64_MAX);
      REQUIRE(remade);
      CHECK(debugStr(*remade) == text);
      CHECK(contents(entry) == whole);
    }
  }
  SECTION("nothing is left in the temporary folder") {
    std::error_code ec;
    CHECK(llvm::sys::fs::directory_iterator(dir.file("cache/.partial"), ec) == llvm::sys::fs::directory_iterator());
  }
}

TEST_CASE("a file with no compressed section has no twin") {
  TempDir dir;
  auto self = ModuleImage::open("/proc/self/exe");
  REQUIRE(bool(self));
  CHECK_FALSE(DecompressedDebugCache(dir.file("cache")).twin(**self, UINT64_MAX));
  CHECK_FALSE(llvm::sys::fs::exists(dir.file("cache")));
}

TEST_CASE("past its size limit the cache removes the least recently used entries") {
  TempDir dir;
  auto first = compressedFile(dir.file("a.debug"), std::string(3000, 'a'));
  auto second = compressedFile(dir.file("b.debug"), std::string(3000, 'b'));
  DecompressedDebugCache unbounded(dir.file("cache"));
  REQUIRE(unbounded.twin(*first, UINT64_MAX));
  std::string firstEntry = unbounded.entryPath(llvm::arrayRefFromStringRef(first->object().getData()));
  uint64_t entrySize = 0;
  REQUIRE_FALSE(bool(llvm::sys::fs::file_size(firstEntry, entrySize)));
  // Make the first entry an hour old.
  int fd = -1;
  REQUIRE_FALSE(bool(llvm::sys::fs::openFileForWrite(firstEntry, fd, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_Append)));
  llvm::sys::fs::setLastAccessAndModificationTime(fd, std::chrono::system_clock::now() - std::chrono::hours(1));
  llvm::sys::fs::closeFile(fd);

  DecompressedDebugCache bounded(dir.file("cache"), entrySize + entrySize / 2);
  auto twin = bounded.twin(*second, UINT64_MAX);
  REQUIRE(twin);
  CHECK(debugStr(*twin) == std::string(3000, 'b'));
  CHECK_FALSE(llvm::sys::fs::exists(firstEntry));
  CHECK(llvm::sys::fs::exists(bounded.entryPath(llvm::arrayRefFromStringRef(second->object().getData()))));
}

TEST_CASE("a cache that cannot be written still gives the twin, in memory") {
  TempDir dir;
  const std::string text = std::string(4000, 'y');
  auto file = compressedFile(dir.file("lib.debug"), text);
  std::ofstream(dir.file("not-a-directory")) << "x";
  DecompressedDebugCache cache(dir.file("not-a-directory/cache"));
  auto twin = cache.twin(*file, UINT64_MAX);
  REQUIRE(twin);
  CHECK(debugStr(*twin) == text);
  CHECK_FALSE(llvm::sys::fs::exists(twin->path())); // made in memory: no entry was written
}
