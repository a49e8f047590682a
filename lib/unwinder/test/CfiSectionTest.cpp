#include "CfiSection.h"

#include "CfiDescription.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <iterator>

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
Bytes ehFrame(const char *augmentation,
              std::initializer_list<int> fdeOps = {DW_CFA_advance_loc | 4, DW_CFA_def_cfa_offset, 16,
                                                       DW_CFA_offset | 6, 2}) {
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
  for (int op : fdeOps) b.u8(uint8_t(op));
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

TEST_CASE("every DW_CFA operation is interpreted") {
  // One program using each operation once; each row checks what it left.
  Bytes frames = ehFrame("zR", {
      DW_CFA_nop,
      DW_CFA_set_loc, 0x01, 0x10, 0, 0, 0, 0, 0, 0,    // 0x1002 (address-sized, as LLVM reads it)
      DW_CFA_advance_loc1, 1,                          // 0x1002
      DW_CFA_offset_extended, 3, 2,                    // rbx at CFA-16
      DW_CFA_advance_loc2, 1, 0,                       // 0x1003
      DW_CFA_restore_extended, 3,                      // rbx: back to the CIE's (unspecified)
      DW_CFA_undefined, 12,                            // r12 undefined
      DW_CFA_same_value, 13,                           // r13 same
      DW_CFA_register, 14, 0,                          // r14 in rax
      DW_CFA_advance_loc4, 1, 0, 0, 0,                 // 0x1004
      DW_CFA_remember_state,
      DW_CFA_def_cfa, 6, 16,                           // CFA = rbp+16
      DW_CFA_def_cfa_register, 7,                      // CFA = rsp+16
      DW_CFA_offset_extended_sf, 15, 0x7e,             // r15 at CFA+16 (factored -2 * -8)
      DW_CFA_advance_loc | 1,                          // 0x1005
      DW_CFA_restore_state,                            // back to CFA = rsp+8, no r15
      DW_CFA_def_cfa_sf, 7, 0x7e,                      // CFA = rsp+16
      DW_CFA_def_cfa_offset_sf, 0x7d,                  // CFA = rsp+24
      DW_CFA_val_offset, 1, 1,                         // rdx = CFA-8
      DW_CFA_val_offset_sf, 2, 0x7f,                   // rcx = CFA+8
      DW_CFA_GNU_args_size, 16,
      0x2f, 4, 3,                                      // DW_CFA_GNU_negative_offset_extended: rsi at CFA+24 (-3 * -8)
      DW_CFA_advance_loc | 1,                          // 0x1006
      DW_CFA_expression, 5, 2, DW_OP_breg7, 8,         // rdi at [rsp+8]
      DW_CFA_val_expression, 8, 2, DW_OP_breg7, 16,    // r8 = rsp+16
      DW_CFA_restore | 16,                             // ra: back to the CIE's rule
      DW_CFA_advance_loc | 1,                          // 0x1007
      DW_CFA_def_cfa_expression, 2, DW_OP_breg7, 32,   // CFA = rsp+32
  });
  CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
  const CfiSection::Entry *entry = find(section, FunctionStart);
  REQUIRE(entry);
  auto rowAt = [&](uint64_t address) -> const UnwindRow & {
    const UnwindRow *found = nullptr;
    for (const UnwindRow &row : entry->table)
      if (row.getAddress() <= address) found = &row;
    REQUIRE(found);
    return *found;
  };
  auto rule = [&](uint64_t address, unsigned reg) { return rowAt(address).getRegisterLocations().getRegisterLocation(reg); };
  CHECK(rule(0x1002, 3) == UnwindLocation::createAtCFAPlusOffset(-16));
  CHECK_FALSE(rule(0x1003, 3));
  CHECK(rule(0x1003, 12) == UnwindLocation::createUndefined());
  CHECK(rule(0x1003, 13) == UnwindLocation::createSame());
  CHECK(rule(0x1003, 14) == UnwindLocation::createIsRegisterPlusOffset(0, 0));
  CHECK(rowAt(0x1004).getCFAValue() == UnwindLocation::createIsRegisterPlusOffset(7, 16));
  CHECK(rule(0x1004, 15) == UnwindLocation::createAtCFAPlusOffset(16));
  CHECK(rowAt(0x1005).getCFAValue() == UnwindLocation::createIsRegisterPlusOffset(7, 24));
  CHECK_FALSE(rule(0x1005, 15));
  CHECK(rule(0x1005, 1) == UnwindLocation::createIsCFAPlusOffset(-8));
  CHECK(rule(0x1005, 2) == UnwindLocation::createIsCFAPlusOffset(8));
  CHECK(rule(0x1005, 4) == UnwindLocation::createAtCFAPlusOffset(24));
  CHECK(rule(0x1006, 5)->getLocation() == UnwindLocation::DWARFExpr);
  CHECK(rule(0x1006, 8)->getLocation() == UnwindLocation::DWARFExpr);
  CHECK(rule(0x1006, 16) == UnwindLocation::createAtCFAPlusOffset(-8));
  CHECK(rowAt(0x1007).getCFAValue().getLocation() == UnwindLocation::DWARFExpr);
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
  SECTION("a CIE shorter than its own header (found by fuzz_cfi)") {
    Bytes b;
    b.u32(6); // length: only the id, the version and an empty augmentation
    b.u32(0);
    b.ops({1, 0, 1, 0x78, 16, DW_CFA_def_cfa, 7, 8}); // the rest of the header lies past the entry
    size_t fde = b.size();
    b.u32(16);
    b.u32(uint32_t(b.size()));
    b.u32(uint32_t(FunctionStart - (EhFrameAddress + b.size())));
    b.u32(0x20);
    b.u32(0);
    b.set32(fde, uint32_t(b.size() - fde - 4));
    CfiSection section(CfiSection::Kind::EhFrame, asRef(b), EhFrameAddress, llvm::Triple::x86_64);
    auto entry = section.find(FunctionStart);
    // Its end falls inside its own program: the entries from there on cannot be read.
    REQUIRE_FALSE(bool(entry));
    CHECK(llvm::toString(entry.takeError()) == "the entries from offset 10 on are not read: CFI entry at 0xa runs past "
                                                "the section");
  }
  SECTION("a length running past the section: what follows is not read, and a miss says so") {
    frames.set32(0, 0xfffffff0);
    CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64);
    auto entry = section.find(FunctionStart);
    REQUIRE_FALSE(bool(entry));
    CHECK(llvm::toString(entry.takeError()) ==
          "the entries from offset 0 on are not read: CFI entry at 0x0 runs past the section");
  }
  SECTION("a header table pointing outside .eh_frame") {
    Bytes hdr = ehFrameHdr(0x100000);
    CfiSection section(CfiSection::Kind::EhFrame, asRef(frames), EhFrameAddress, llvm::Triple::x86_64, asRef(hdr),
                       HdrAddress);
    CHECK(find(section, FunctionStart) == nullptr);
  }
}

// fuzz_cfi's input: a kind byte, then the section. LLVM 19 would have printed
// an expression block of the length its operand claims, 2^32 bytes, for
// --unwind-info: gigabytes of text (fuzz/findings/llvm19-cfi-expression-block-past-end).
TEST_CASE("an entry whose DWARF expression claims a block past its end is described without LLVM's dump") {
  std::ifstream file(STACKWALK_FINDINGS_DIR "/llvm19-cfi-expression-block-past-end", std::ios::binary);
  REQUIRE(file);
  std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  REQUIRE(bytes.size() > 1);
  CfiSection cfi(CfiSection::Kind::EhFrame, llvm::StringRef(bytes).drop_front(), 0x1000, llvm::Triple::x86_64);
  bool refused = false;
  for (uint64_t address : {0x0ull, 0x1000ull, 0x1010ull, 0x2000ull, 0x7fffffffull}) {
    auto entry = cfi.find(address);
    if (!entry) {
      llvm::consumeError(entry.takeError());
      continue;
    }
    if (!*entry) continue;
    std::vector<std::string> description;
    describeCfiEntry(description, **entry, address, Arch::X86_64, /*isEh=*/true);
    for (const std::string &line : description) {
      CHECK(line.size() < 4096);
      refused |= line.find("runs past its end") != std::string::npos;
    }
  }
  CHECK(refused);
}
