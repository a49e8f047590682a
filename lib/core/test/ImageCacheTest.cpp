#include "stackwalk/core/ImageCache.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace stackwalk;

namespace {

std::vector<uint8_t> fileBytes(const char *path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::shared_ptr<ModuleImage> memoryImage(std::vector<uint8_t> bytes, const std::string &name) {
  auto image = ModuleImage::fromBytes(std::move(bytes), name);
  REQUIRE(bool(image));
  return std::move(*image);
}

} // namespace

TEST_CASE("images from memory with the same name and bytes are one image for the session") {
  ImageCache cache;
  std::vector<uint8_t> bytes = fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll");
  std::shared_ptr<ModuleImage> first = memoryImage(bytes, "exports.dll");
  std::shared_ptr<ModuleImage> second = memoryImage(bytes, "exports.dll");
  REQUIRE(first != second);
  CHECK(cache.intern(first) == first);
  CHECK(cache.intern(second) == first); // a later dump's copy becomes the session's
  CHECK(cache.intern(first) == first);
}

TEST_CASE("different bytes, or the same bytes under another name, stay apart") {
  ImageCache cache;
  std::vector<uint8_t> bytes = fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll");
  std::shared_ptr<ModuleImage> original = cache.intern(memoryImage(bytes, "exports.dll"));
  std::shared_ptr<ModuleImage> renamed = memoryImage(bytes, "other.dll");
  CHECK(cache.intern(renamed) == renamed);
  // One byte changed where no reader looks (the DOS stub) is still another image.
  bytes[0x50] ^= 1;
  std::shared_ptr<ModuleImage> changed = memoryImage(bytes, "exports.dll");
  CHECK(cache.intern(changed) == changed);
  CHECK(cache.intern(memoryImage(fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll"), "exports.dll")) == original);
}

TEST_CASE("files are kept by path, and interning leaves them as they are") {
  ImageCache cache;
  CHECK(cache.file(STACKWALK_CORE_TEST_DATA "/pdata.dll") == nullptr);
  auto opened = ModuleImage::open(STACKWALK_CORE_TEST_DATA "/pdata.dll");
  REQUIRE(bool(opened));
  std::shared_ptr<ModuleImage> image(std::move(*opened));
  REQUIRE_FALSE(image->inMemory());
  cache.addFile(STACKWALK_CORE_TEST_DATA "/pdata.dll", image);
  CHECK(cache.file(STACKWALK_CORE_TEST_DATA "/pdata.dll") == image);
  CHECK(cache.intern(image) == image);
  CHECK(cache.intern(nullptr) == nullptr);
}
