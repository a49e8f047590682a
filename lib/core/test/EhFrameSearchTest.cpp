// findEhFrame on synthetic read-only segments: the chain of CIE and FDE records
// is found wherever it lies among other bytes, only when it ends in a zero
// terminator and each of its FDEs describes code the image maps.
#include "EhFrameSearch.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

using namespace stackwalk;

namespace {

constexpr uint64_t SegmentAddress = 0x48e000;
const std::vector<CodeRange> Code = {{0x401000, 0x48d000}};

struct Segment {
  std::vector<uint8_t> bytes;

  void u32(uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes.push_back(uint8_t(value >> (8 * i)));
  }
  // A CIE as GCC writes it for x86-64: "zR", FDE pointers pc-relative sdata4.
  uint64_t cie() {
    uint64_t at = bytes.size();
    const uint8_t body[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0};
    u32(sizeof body);
    bytes.insert(bytes.end(), std::begin(body), std::end(body));
    return at;
  }
  // An FDE of `cie` for [pc, pc + size).
  void fde(uint64_t cie, uint64_t pc, uint32_t size) {
    u32(16);
    u32(uint32_t(bytes.size() - cie));
    u32(uint32_t(pc - (SegmentAddress + bytes.size()))); // pc-relative to this field
    u32(size);
    u32(0); // augmentation length 0, then DW_CFA_nop padding
  }
  void filler(size_t words, uint32_t value = 0x11223344) {
    for (size_t i = 0; i < words; ++i) u32(value);
  }
};

std::optional<EhFrameBounds> search(const Segment &segment) {
  return findEhFrame(segment.bytes, SegmentAddress, 8, llvm::Triple::x86_64, Code);
}

} // namespace

TEST_CASE("an .eh_frame among other read-only data is found, its terminator included") {
  Segment segment;
  segment.filler(40);
  uint64_t begin = segment.bytes.size();
  uint64_t cie = segment.cie();
  segment.fde(cie, 0x401100, 0x40);
  segment.fde(cie, 0x401140, 0x80);
  segment.u32(0);
  uint64_t end = segment.bytes.size();
  segment.filler(8);
  auto found = search(segment);
  REQUIRE(found);
  CHECK(found->offset == begin);
  CHECK(found->size == end - begin);
}

TEST_CASE("of several chains the one with the most FDEs is .eh_frame") {
  Segment segment;
  uint64_t small = segment.cie();
  segment.fde(small, 0x401100, 0x40);
  segment.u32(0);
  segment.filler(3);
  uint64_t begin = segment.bytes.size();
  uint64_t cie = segment.cie();
  for (int i = 0; i < 3; ++i) segment.fde(cie, 0x402000 + 0x100 * i, 0x100);
  segment.u32(0);
  auto found = search(segment);
  REQUIRE(found);
  CHECK(found->offset == begin);
}

TEST_CASE("a chain is not .eh_frame unless it ends in a terminator and describes mapped code") {
  SECTION("an FDE for code outside every executable segment") {
    Segment segment;
    uint64_t cie = segment.cie();
    segment.fde(cie, 0x401100, 0x40);
    segment.fde(cie, 0x900000, 0x40);
    segment.u32(0);
    CHECK_FALSE(search(segment));
  }
  SECTION("records that run to the segment's end without a terminator") {
    Segment segment;
    uint64_t cie = segment.cie();
    segment.fde(cie, 0x401100, 0x40);
    CHECK_FALSE(search(segment));
  }
  SECTION("an FDE whose CIE pointer names no CIE of the chain") {
    Segment segment;
    segment.filler(4);
    uint64_t cie = segment.cie();
    segment.fde(cie - 8, 0x401100, 0x40);
    segment.u32(0);
    CHECK_FALSE(search(segment));
  }
  SECTION("a CIE and a terminator, no FDE") {
    Segment segment;
    segment.cie();
    segment.u32(0);
    CHECK_FALSE(search(segment));
  }
}

TEST_CASE("a segment of CIEs with no terminator is searched once through, not once per CIE") {
  // 100,000 CIEs chain to the segment's end and fail there; a search that
  // walked the rest of the chain from each of them would read 5e9 records.
  Segment segment;
  for (int i = 0; i < 100000; ++i) segment.cie();
  CHECK_FALSE(search(segment));
}
