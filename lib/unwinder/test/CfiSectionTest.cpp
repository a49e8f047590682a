#include "CfiSection.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace llvm::dwarf;

namespace {

constexpr uint64_t EhFrameAddress = 0x2000, HdrAddress = 0x1800, FunctionStart = 0x1000;

struct Bytes : std::vector<uint8_t> {
  void u8(uint8_t v) { push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) push_back(uint8_t(v >> (8 * i)));
  }
  void set32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) (*this)[at + i] = uint8_t(v >> (8 * i));
  }
  void ops(std::initializer_list<uint8_t> bytes) { insert(end(), bytes); }
};

// .eh_frame with one CIE ("zR" or "zRS") and one FDE for [0x1000, 0x1020):
// CFA = rsp+8, ra at CFA-8; after 4 bytes CFA = rsp+16, rbp at CFA-16.
Bytes ehFrame(const char *augmentation) {
  Bytes b;
  b.u32(0); // length, patched
  b.u32(0); // CIE id
  b.u8(1);
  b.insert(b.end(), augmentation, augmentation + strlen(augmentation) + 1);
  b.ops({1, 0x78, 16, 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4}); // code 1, data -8, ra 16, aug len, enc
  b.ops({DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1});
  while (b.size() % 4) b.u8(DW_CFA_nop);
  b.set32(0, uint32_t(b.size() - 4));
  size_t fde = b.size();
  b.u32(0);                               // length, patched
  b.u32(uint32_t(b.size()));              // CIE pointer: back to offset 0
  b.u32(uint32_t(FunctionStart - (EhFrameAddress + b.size()))); // pc_begin, pcrel
  b.u32(0x20);                            // pc_range
  b.u8(0);                                // augmentation data length
  b.ops({DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | 6, 2});
  while (b.size() % 4) b.u8(DW_CFA_nop);
  b.set32(fde, uint32_t(b.size() - fde - 4));
  b.u32(0); // terminator
  return b;
}

Bytes ehFrameHdr(uint64_t fdeOffset) {
  Bytes b;
  b.ops({1, DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_udata4, DW_EH_PE_datarel | DW_EH_PE_sdata4});
  b.u32(uint32_t(EhFrameAddress - (HdrAddress + 4)));
  b.u32(1);
  b.u32(uint32_t(FunctionStart - HdrAddress));
  b.u32(uint32_t(EhFrameAddress + fdeOffset - HdrAddress));
  return b;
}

llvm::StringRef asRef(const Bytes &b) { return {reinterpret_cast<const char *>(b.data()), b.size()}; }

const CfiSection::Entry *find(CfiSection &section, uint64_t address) {
  auto entry = section.find(address);
  if (!entry) FAIL(llvm::toString(entry.takeError()));
  return *entry;
}

void checkRows(const CfiSection::Entry &entry) {
  CHECK(entry.fde->getInitialLocation() == FunctionStart);
  CHECK(entry.returnAddressRegister == 16);
  REQUIRE(entry.table.size() == 2);
  const UnwindRow &first = entry.table[0];
  CHECK(first.getCFAValue() == UnwindLocation::createIsRegisterPlusOffset(7, 8));
  CHECK(first.getRegisterLocations().getRegisterLocation(16) == UnwindLocation::createAtCFAPlusOffset(-8));
  const UnwindRow &second = entry.table[1];
  CHECK(second.getAddress() == FunctionStart + 4);
  CHECK(second.getCFAValue() == UnwindLocation::createIsRegisterPlusOffset(7, 16));
  CHECK(second.getRegisterLocations().getRegisterLocation(6) == UnwindLocation::createAtCFAPlusOffset(-16));
}

} // namespace

TEST_CASE("an FDE is found by walking .eh_frame when there is no header table") {
  Bytes frames = ehFrame("zR");
  CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
  const CfiSection::Entry *entry = find(section, FunctionStart + 0x10);
  REQUIRE(entry);
  checkRows(*entry);
  CHECK_FALSE(entry->signalFrame);
  CHECK(find(section, FunctionStart + 0x20) == nullptr);
  CHECK(find(section, FunctionStart - 1) == nullptr);
}

TEST_CASE("an FDE is found through .eh_frame_hdr's sorted table") {
  Bytes frames = ehFrame("zR");
  uint32_t cieLength = frames[0] | frames[1] << 8;
  Bytes hdr = ehFrameHdr(cieLength + 4);
  CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64, asRef(hdr),
                     HdrAddress);
  const CfiSection::Entry *entry = find(section, FunctionStart);
  REQUIRE(entry);
  checkRows(*entry);
  CHECK(find(section, FunctionStart + 0x1000) == nullptr);
}

TEST_CASE("'S' in the augmentation marks a signal frame") {
  Bytes frames = ehFrame("zRS");
  CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
  const CfiSection::Entry *entry = find(section, FunctionStart);
  REQUIRE(entry);
  CHECK(entry->signalFrame);
}

TEST_CASE("damaged CFI is an error or nothing, never a crash") {
  Bytes frames = ehFrame("zR");
  uint32_t cieLength = frames[0] | frames[1] << 8;
  SECTION("an FDE whose CIE pointer leads nowhere") {
    frames.set32(cieLength + 8, 0x7fffffff);
    CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
    auto entry = section.find(FunctionStart);
    if (entry) CHECK(*entry == nullptr);
    else llvm::consumeError(entry.takeError());
  }
  SECTION("a length running past the section") {
    frames.set32(0, 0xfffffff0);
    CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
    CHECK(find(section, FunctionStart) == nullptr);
  }
  SECTION("a header table pointing outside .eh_frame") {
    Bytes hdr = ehFrameHdr(0x100000);
    CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64, asRef(hdr),
                       HdrAddress);
    CHECK(find(section, FunctionStart) == nullptr);
  }
}
