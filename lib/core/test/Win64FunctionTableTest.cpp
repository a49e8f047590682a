#include "stackwalk/core/Win64FunctionTable.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;

namespace {

constexpr uint64_t Base = 0x10000;

void put32(std::vector<uint8_t> &bytes, size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, 4); }
void putEntry(std::vector<uint8_t> &bytes, size_t at, RuntimeFunction f) {
  put32(bytes, at, f.begin), put32(bytes, at + 4, f.end), put32(bytes, at + 8, f.unwindInfo);
}

// A PE32+ image's headers and function table:
//   0x1000-0x1100  a function (unwind info at 0x200)
//   0x1100-0x1180  an indirect entry naming the first function's entry (at 0x300)
//   0x2000-0x2080  a fragment whose chained unwind info leads back to the first function
//   0x3000-0x3010  a fragment whose chain loops
struct Image {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(0x400);
  Image() {
    bytes[0] = 'M', bytes[1] = 'Z';
    put32(bytes, 0x3c, 0x40);
    put32(bytes, 0x40, 0x4550);                          // "PE\0\0"
    bytes[0x40 + 24] = 0x0b, bytes[0x40 + 25] = 0x02;    // PE32+
    put32(bytes, 0x40 + 24 + 108, 16);                   // NumberOfRvaAndSizes
    put32(bytes, 0x40 + 24 + 112 + 24, 0x100);           // the exception directory
    put32(bytes, 0x40 + 24 + 112 + 28, 4 * 12);
    putEntry(bytes, 0x100, {0x1000, 0x1100, 0x200});
    putEntry(bytes, 0x10c, {0x1100, 0x1180, 0x301});
    putEntry(bytes, 0x118, {0x2000, 0x2080, 0x210});
    putEntry(bytes, 0x124, {0x3000, 0x3010, 0x240});
    bytes[0x200] = 0x01;                                 // version 1, no flags, no codes
    bytes[0x210] = 0x01 | 0x4 << 3, bytes[0x212] = 1;    // chained, one code: parent at +4+4
    putEntry(bytes, 0x218, {0x1000, 0x1100, 0x200});
    bytes[0x240] = 0x01 | 0x4 << 3;                      // chained, no codes: parent at +4
    putEntry(bytes, 0x244, {0x3000, 0x3010, 0x240});     // ... which is itself
    putEntry(bytes, 0x300, {0x1000, 0x1100, 0x200});
  }
  BufferMemory memory() const {
    BufferMemory memory;
    memory.add(Base, bytes);
    return memory;
  }
};

std::optional<RuntimeFunction> covering(const Win64FunctionTable &table, const MemorySource &memory, uint64_t rva) {
  auto entry = table.entryCovering(memory, rva);
  REQUIRE(bool(entry));
  return *entry;
}

} // namespace

TEST_CASE("the function table gives the entry holding an address, none in gaps") {
  BufferMemory memory = Image().memory();
  auto table = Win64FunctionTable::read(memory, Base);
  REQUIRE(bool(table));
  CHECK(covering(*table, memory, 0x1050)->begin == 0x1000);
  CHECK(covering(*table, memory, 0x10ff)->begin == 0x1000);
  CHECK(covering(*table, memory, 0x2010)->begin == 0x2000);
  CHECK_FALSE(covering(*table, memory, 0x1180)); // a gap: leaf code
  CHECK_FALSE(covering(*table, memory, 0x0500)); // before the first entry
  CHECK_FALSE(covering(*table, memory, 0x9000));
}

TEST_CASE("a fragment's function starts where its chain of entries begins") {
  BufferMemory memory = Image().memory();
  auto table = Win64FunctionTable::read(memory, Base);
  REQUIRE(bool(table));
  auto start = [&](uint64_t rva) {
    auto value = table->functionStart(memory, *covering(*table, memory, rva));
    REQUIRE(bool(value));
    return *value;
  };
  CHECK(start(0x1050) == 0x1000);
  CHECK(start(0x1150) == 0x1000); // indirect
  CHECK(start(0x2010) == 0x1000); // chained unwind info
  auto loop = table->functionStart(memory, *covering(*table, memory, 0x3000));
  REQUIRE(!loop);
  CHECK(llvm::toString(loop.takeError()) == "chained RUNTIME_FUNCTIONs loop");
}

TEST_CASE("headers that are not PE32+ have no table; an unreadable table is an error") {
  Image image;
  image.bytes[0x40 + 24] = 0x0b, image.bytes[0x40 + 25] = 0x01; // PE32
  BufferMemory pe32 = image.memory();
  auto none = Win64FunctionTable::read(pe32, Base);
  REQUIRE_FALSE(bool(none));
  CHECK(llvm::toString(none.takeError()) == "not a PE32+ image");
  Image truncated;
  put32(truncated.bytes, 0x40 + 24 + 112 + 24, 0x1000); // the table past the bytes
  BufferMemory memory = truncated.memory();
  auto table = Win64FunctionTable::read(memory, Base);
  REQUIRE(bool(table));
  auto entry = table->entryCovering(memory, 0x1050);
  REQUIRE(!entry);
  CHECK(llvm::toString(entry.takeError()).find("is not readable") != std::string::npos);
}
