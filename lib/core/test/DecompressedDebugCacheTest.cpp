#include "stackwalk/core/DecompressedDebugCache.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ObjCopy/CommonConfig.h"
#include "llvm/ObjCopy/ELF/ELFConfig.h"
#include "llvm/ObjCopy/ELF/ELFObjcopy.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace stackwalk;

namespace {

llvm::SmallVector<char, 0> objcopy(llvm::StringRef bytes, const llvm::objcopy::CommonConfig &common) {
  auto input = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(bytes, "input"));
  REQUIRE(bool(input));
  llvm::objcopy::ELFConfig elf;
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream stream(out);
  REQUIRE_FALSE(bool(llvm::objcopy::elf::executeObjcopyOnBinary(
      common, elf, llvm::cast<llvm::object::ELFObjectFileBase>(**input), stream)));
  return out;
}

// This test program's file with a .debug_str section of `text` added, then
// zlib-compressed (as Debian's debug files have theirs), written to `path`.
std::unique_ptr<ModuleImage> compressedFile(const std::string &path, const std::string &text) {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(self), std::istreambuf_iterator<char>()};
  llvm::objcopy::CommonConfig add, compress;
  add.AddSection.emplace_back(".debug_str", llvm::MemoryBuffer::getMemBufferCopy(text));
  compress.CompressionType = llvm::DebugCompressionType::Zlib;
  auto added = objcopy(bytes, add);
  auto compressed = objcopy(llvm::StringRef(added.data(), added.size()), compress);
  std::ofstream(path, std::ios::binary).write(compressed.data(), compressed.size());
  auto image = ModuleImage::open(path);
  REQUIRE(bool(image));
  return std::move(*image);
}

struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> dir;
    REQUIRE_FALSE(bool(llvm::sys::fs::createUniqueDirectory("inflated-test", dir)));
    path = std::string(dir);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

std::string debugStr(const ModuleImage &image) {
  auto section = image.section(".debug_str");
  return section ? section->data.str() : "";
}

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void damage(const std::string &path, bool truncate) {
  std::string bytes = contents(path);
  if (truncate) bytes.resize(bytes.size() / 2);
  else bytes[bytes.size() / 2] ^= 0x55;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace

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

TEST_CASE("sections claiming more than the debug budget are not decompressed") {
  TempDir dir;
  auto file = compressedFile(dir.file("lib.debug"), std::string(5000, 'x'));
  CHECK_FALSE(DecompressedDebugCache(dir.file("cache")).twin(*file, 4000));
  auto bytes = decompressDebugSections(*file, 4000);
  REQUIRE_FALSE(bool(bytes));
  llvm::consumeError(bytes.takeError());
  CHECK(bool(decompressDebugSections(*file, 5000 + 1000)));
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

TEST_CASE("a section's claimed alignment does not size the twin (fuzz/findings/objcopy-section-alignment-2pow40)") {
  // The finding: its DWARF does not inflate, but nothing may be allocated for the alignment.
  auto finding = contents(STACKWALK_FINDINGS_DIR "/objcopy-section-alignment-2pow40");
  auto image = ModuleImage::fromBytes(std::vector<uint8_t>(finding.begin(), finding.end()), "finding");
  REQUIRE(bool(image));
  auto twin = decompressDebugSections(**image, 64 << 20);
  if (!twin) llvm::consumeError(twin.takeError());

  // A good file with a section claiming 2^40 alignment has its twin as ever.
  TempDir dir;
  compressedFile(dir.file("lib.debug"), std::string(5000, 'x'));
  std::string bytes = contents(dir.file("lib.debug"));
  llvm::ELF::Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  llvm::ELF::Elf64_Shdr section;
  std::memcpy(&section, &bytes[header.e_shoff + sizeof section], sizeof section);
  section.sh_addralign = uint64_t(1) << 40;
  std::memcpy(&bytes[header.e_shoff + sizeof section], &section, sizeof section);
  auto aligned = ModuleImage::fromBytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), "aligned");
  REQUIRE(bool(aligned));
  auto alignedTwin = decompressDebugSections(**aligned, 64 << 20);
  REQUIRE(bool(alignedTwin));
  CHECK(alignedTwin->size() < bytes.size() + 64 * 1024);
  auto parsed = ModuleImage::fromBytes(std::vector<uint8_t>(alignedTwin->begin(), alignedTwin->end()), "twin");
  REQUIRE(bool(parsed));
  CHECK(debugStr(**parsed) == std::string(5000, 'x'));
}
