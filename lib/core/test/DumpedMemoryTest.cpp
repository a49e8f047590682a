#include "stackwalk/core/DumpedMemory.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

namespace {

// A file of bytes 0, 1, 2, ... (mod 256), so a read shows the file offset it came from.
std::shared_ptr<const DumpFile> countingFile(size_t size) {
  std::string bytes(size, 0);
  for (size_t i = 0; i < size; ++i) bytes[i] = char(i);
  return std::make_shared<const DumpFile>(llvm::MemoryBuffer::getMemBufferCopy(bytes));
}

std::vector<uint8_t> readBytes(const DumpedMemory &memory, uint64_t address, size_t size) {
  std::vector<uint8_t> out(size);
  return memory.read(address, out) ? out : std::vector<uint8_t>{};
}

std::vector<uint8_t> inPlace(const DumpedMemory &memory, uint64_t address, size_t size) {
  auto bytes = memory.bytesInPlace(address, size);
  return bytes ? std::vector<uint8_t>(bytes->begin(), bytes->end()) : std::vector<uint8_t>{};
}

} // namespace

TEST_CASE("DumpedMemory reads each byte from the range that starts last", "[dumped-memory]") {
  // [0x1000, 0x1010) from offset 0; [0x1004, 0x1008) from offset 100 overlaps it.
  DumpedMemory memory(countingFile(256), {{0x1000, 0x10, 0}, {0x1004, 4, 100}});
  CHECK(readBytes(memory, 0x1000, 4) == std::vector<uint8_t>{0, 1, 2, 3});
  CHECK(readBytes(memory, 0x1004, 4) == std::vector<uint8_t>{100, 101, 102, 103});
  CHECK(readBytes(memory, 0x1008, 2) == std::vector<uint8_t>{8, 9}); // the outer range again past the inner one
  CHECK(readBytes(memory, 0x1002, 8) == std::vector<uint8_t>{2, 3, 100, 101, 102, 103, 8, 9});
  CHECK(readBytes(memory, 0x100e, 4).empty()); // past the end
  CHECK(readBytes(memory, 0xfff, 2).empty());  // before the start
}

TEST_CASE("DumpedMemory reads across adjacent ranges, never across a gap", "[dumped-memory]") {
  DumpedMemory memory(countingFile(256), {{0x2004, 4, 50}, {0x2000, 4, 10}, {0x2010, 4, 0}});
  CHECK(readBytes(memory, 0x2002, 4) == std::vector<uint8_t>{12, 13, 50, 51});
  CHECK(readBytes(memory, 0x2006, 12).empty());
}

TEST_CASE("DumpedMemory gives bytes in place within one range only", "[dumped-memory]") {
  // A range the dump did not hold (size 0: a core segment past p_filesz) holds nothing.
  DumpedMemory memory(countingFile(256), {{0x3000, 8, 20}, {0x3008, 8, 60}, {0x4000, 0, 0}});
  CHECK(inPlace(memory, 0x3002, 4) == std::vector<uint8_t>{22, 23, 24, 25});
  CHECK(inPlace(memory, 0x3008, 8) == std::vector<uint8_t>{60, 61, 62, 63, 64, 65, 66, 67});
  CHECK(inPlace(memory, 0x3006, 4).empty()); // it spans two ranges, which read() copies together
  CHECK(readBytes(memory, 0x3006, 4) == std::vector<uint8_t>{26, 27, 60, 61});
  CHECK(inPlace(memory, 0x300c, 8).empty()); // past the end
  CHECK(inPlace(memory, 0x4000, 1).empty());
  CHECK(readBytes(memory, 0x4000, 1).empty());
}

// 8,000 reads among a million ranges: with the old backward search over every
// range that could hold an address this took minutes; now each read is a binary search.
TEST_CASE("DumpedMemory reads among a million tiny ranges and a long one", "[dumped-memory]") {
  std::vector<DumpedRange> ranges{{0x100000, 0x200000, 0}};
  for (uint64_t i = 0; i < 1'000'000; ++i) ranges.push_back({0x100000 + 2 * i, 1, i % 4096});
  DumpedMemory memory(countingFile(0x200000), std::move(ranges));
  size_t read = 0;
  for (uint64_t address = 0x100000; address < 0x300000; address += 0x101) read += !readBytes(memory, address, 1).empty();
  CHECK(read == 0x200000 / 0x101 + 1);
}
