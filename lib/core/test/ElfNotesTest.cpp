#include "stackwalk/core/ElfNotes.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace stackwalk;

namespace {
void put32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
// One note record: namesz, descsz, type, name (NUL, padded), desc (padded).
void addNote(std::vector<uint8_t> &out, const std::string &name, uint32_t type, std::vector<uint8_t> desc) {
  put32(out, uint32_t(name.size() + 1));
  put32(out, uint32_t(desc.size()));
  put32(out, type);
  out.insert(out.end(), name.begin(), name.end());
  out.push_back(0);
  while (out.size() % 4) out.push_back(0);
  out.insert(out.end(), desc.begin(), desc.end());
  while (out.size() % 4) out.push_back(0);
}
} // namespace

TEST_CASE("notes are visited in order with name, type and payload") {
  std::vector<uint8_t> bytes;
  addNote(bytes, "CORE", 1, {1, 2, 3});
  addNote(bytes, "LINUX", 0x202, {9, 9, 9, 9, 9});
  std::vector<std::string> names;
  std::vector<size_t> sizes;
  REQUIRE(forEachElfNote(bytes, [&](const ElfNote &note) {
    names.emplace_back(note.name);
    sizes.push_back(note.desc.size());
    return true;
  }));
  CHECK(names == std::vector<std::string>{"CORE", "LINUX"});
  CHECK(sizes == std::vector<size_t>{3, 5});
}

TEST_CASE("a note whose size runs past the segment stops the walk and reports damage") {
  std::vector<uint8_t> bytes;
  addNote(bytes, "CORE", 1, {1, 2, 3, 4});
  addNote(bytes, "CORE", 3, {5, 6, 7, 8});
  bytes[12 + 8 + 4 + 4] = 0xff; // descsz of the second note: huge
  int seen = 0;
  CHECK_FALSE(forEachElfNote(bytes, [&](const ElfNote &) { return ++seen, true; }));
  CHECK(seen == 1);
}

TEST_CASE("the GNU build-id is found among other notes") {
  std::vector<uint8_t> bytes;
  addNote(bytes, "GNU", 1, {0, 0, 0, 0, 3, 2, 0, 0}); // NT_GNU_ABI_TAG
  addNote(bytes, "GNU", 3, {0xde, 0xad, 0xbe, 0xef});
  auto id = findGnuBuildId(bytes);
  CHECK(std::vector<uint8_t>(id.begin(), id.end()) == std::vector<uint8_t>{0xde, 0xad, 0xbe, 0xef});
  std::vector<uint8_t> other;
  addNote(other, "XYZ", 3, {1});
  CHECK(findGnuBuildId(other).empty());
}
