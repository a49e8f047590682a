#include "stackwalk/core/DwarfUnitCheck.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <optional>
#include <string>

using namespace stackwalk;
using namespace llvm;

namespace {

// Little-endian DWARF bytes, written by hand so each test breaks one field.
struct Bytes {
  std::string data;
  Bytes &u8(uint8_t v) { return raw(&v, 1); }
  Bytes &u16(uint16_t v) { return raw(&v, 2); }
  Bytes &u32(uint32_t v) { return raw(&v, 4); }
  Bytes &u64(uint64_t v) { return raw(&v, 8); }
  Bytes &uleb(uint64_t v) {
    do {
      uint8_t byte = v & 0x7f;
      v >>= 7;
      u8(byte | (v ? 0x80 : 0));
    } while (v);
    return *this;
  }
  Bytes &str(const char *s) { return raw(s, std::strlen(s) + 1); }
  Bytes &raw(const void *p, size_t n) {
    data.append(static_cast<const char *>(p), n);
    return *this;
  }
  // The 32-bit length field at `at` set to cover the rest.
  void patchLength(size_t at) {
    uint32_t length = uint32_t(data.size() - at - 4);
    std::memcpy(&data[at], &length, 4);
  }
};

constexpr uint64_t CodeStart = 0x1000, CodeSize = 0x100;

enum Abbrev : uint8_t { CompileUnit = 1, Function = 2, FunctionWithFrameBase = 3, FunctionFromOrigin = 4 };

std::string abbreviations() {
  using namespace dwarf;
  Bytes b;
  b.uleb(CompileUnit).uleb(DW_TAG_compile_unit).u8(DW_CHILDREN_yes);
  b.uleb(DW_AT_name).uleb(DW_FORM_string).uleb(DW_AT_stmt_list).uleb(DW_FORM_sec_offset);
  b.uleb(DW_AT_low_pc).uleb(DW_FORM_addr).uleb(DW_AT_high_pc).uleb(DW_FORM_data4).uleb(0).uleb(0);
  b.uleb(Function).uleb(DW_TAG_subprogram).u8(DW_CHILDREN_no);
  b.uleb(DW_AT_name).uleb(DW_FORM_string).uleb(DW_AT_low_pc).uleb(DW_FORM_addr);
  b.uleb(DW_AT_high_pc).uleb(DW_FORM_data4).uleb(0).uleb(0);
  b.uleb(FunctionWithFrameBase).uleb(DW_TAG_subprogram).u8(DW_CHILDREN_no);
  b.uleb(DW_AT_frame_base).uleb(DW_FORM_exprloc).uleb(DW_AT_name).uleb(DW_FORM_string).uleb(0).uleb(0);
  b.uleb(FunctionFromOrigin).uleb(DW_TAG_subprogram).u8(DW_CHILDREN_no);
  b.uleb(DW_AT_abstract_origin).uleb(DW_FORM_ref_addr).uleb(0).uleb(0);
  b.uleb(0);
  return b.data;
}

// A DWARF 5 compile unit covering [CodeStart, CodeStart + CodeSize) with one
// function, then whatever child DIEs `children` writes.
template <typename Children> void compileUnit(Bytes &info, uint64_t lowPc, Children children) {
  size_t start = info.data.size();
  info.u32(0).u16(5).u8(dwarf::DW_UT_compile).u8(8).u32(0);
  info.uleb(CompileUnit).str("a.c").u32(0).u64(lowPc).u32(CodeSize);
  info.uleb(Function).str("f").u64(lowPc).u32(CodeSize);
  children(info);
  info.uleb(0);
  info.patchLength(start);
}

struct LineTableShape {
  uint64_t pathForm = dwarf::DW_FORM_string;
  uint64_t extendedLength = 9; // of the DW_LNE_set_address opcode
};

// A DWARF 5 line table: one directory, one file, one sequence over the code.
std::string lineTable(const LineTableShape &shape) {
  using namespace dwarf;
  Bytes b;
  b.u32(0).u16(5).u8(8).u8(0);
  size_t headerLengthAt = b.data.size();
  b.u32(0).u8(1).u8(1).u8(1).u8(uint8_t(-5)).u8(14).u8(13);
  for (uint8_t length : {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1}) b.u8(length);
  b.u8(1).uleb(DW_LNCT_path).uleb(shape.pathForm).uleb(1).str("/src");
  b.u8(2).uleb(DW_LNCT_path).uleb(DW_FORM_string).uleb(DW_LNCT_directory_index).uleb(DW_FORM_udata);
  b.uleb(1).str("a.c").uleb(0);
  b.patchLength(headerLengthAt);
  b.u8(0).uleb(shape.extendedLength).u8(DW_LNE_set_address).u64(CodeStart);
  b.u8(DW_LNS_set_file).uleb(0).u8(DW_LNS_copy).u8(DW_LNS_advance_pc).uleb(CodeSize).u8(0).uleb(1).u8(DW_LNE_end_sequence);
  b.patchLength(0);
  return b.data;
}

struct Dwarf {
  StringMap<std::unique_ptr<MemoryBuffer>> sections; // the context only refers to them
  std::unique_ptr<DWARFContext> context;
  std::unique_ptr<DwarfUnitCheck> check;
};

// With `partialEnd`, the context is given .debug_info's bytes before it only.
Dwarf makeDwarf(const std::string &info, const std::string &line, std::optional<uint64_t> partialEnd = std::nullopt) {
  Dwarf dwarf;
  dwarf.sections["debug_info"] = MemoryBuffer::getMemBufferCopy(partialEnd ? info.substr(0, *partialEnd) : info);
  dwarf.sections["debug_abbrev"] = MemoryBuffer::getMemBufferCopy(abbreviations());
  dwarf.sections["debug_line"] = MemoryBuffer::getMemBufferCopy(line);
  dwarf.context = DWARFContext::create(dwarf.sections, 8, /*isLittleEndian=*/true);
  dwarf.check = std::make_unique<DwarfUnitCheck>(*dwarf.context, partialEnd);
  return dwarf;
}

auto noChildren = [](Bytes &) {};

} // namespace

TEST_CASE("a well-formed unit and line table are readable, and LLVM reads them as written") {
  Bytes info;
  compileUnit(info, CodeStart, noChildren);
  Dwarf dwarf = makeDwarf(info.data, lineTable({}));
  REQUIRE(dwarf.check->unitHeadsReadable());
  REQUIRE(dwarf.check->readableAt(CodeStart + 4));
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath,
                           DILineInfoSpecifier::FunctionNameKind::ShortName);
  DILineInfo line = dwarf.context->getLineInfoForAddress({CodeStart + 4, object::SectionedAddress::UndefSection}, spec);
  CHECK(line.FunctionName == "f");
  CHECK(line.FileName == "/src/a.c");
  CHECK(line.Line == 1);
  CHECK(dwarf.check->readableAt(CodeStart + CodeSize + 0x1000)); // no unit there: LLVM reads none
}

TEST_CASE("a block that runs past its unit makes the unit unreadable (fuzz/findings/llvm19-dwarf-skipValue-*)") {
  Bytes info;
  compileUnit(info, CodeStart, [](Bytes &b) { b.uleb(FunctionWithFrameBase).uleb(1000).u8(0x9c).str("g"); });
  Dwarf dwarf = makeDwarf(info.data, lineTable({}));
  CHECK(dwarf.check->unitHeadsReadable()); // the unit DIE itself is fine
  CHECK_FALSE(dwarf.check->readableAt(CodeStart + 4));
}

TEST_CASE("an unreadable unit DIE keeps the whole context from LLVM") {
  Bytes info;
  compileUnit(info, CodeStart, noChildren);
  info.data[12] = 9; // the unit DIE's abbreviation, after the 12-byte header: none has code 9
  Dwarf dwarf = makeDwarf(info.data, lineTable({}));
  CHECK_FALSE(dwarf.check->unitHeadsReadable());
}

TEST_CASE("a line table path in a form LLVM does not know is not read (fuzz/findings/llvm19-dwarf-line-prologue-*)") {
  Bytes info;
  compileUnit(info, CodeStart, noChildren);
  CHECK_FALSE(makeDwarf(info.data, lineTable({.pathForm = 0x7f})).check->readableAt(CodeStart));
  CHECK(makeDwarf(info.data, lineTable({.pathForm = dwarf::DW_FORM_line_strp})).check->readableAt(CodeStart));
}

TEST_CASE("an extended line opcode whose length wraps back would make LLVM loop forever") {
  Bytes info;
  compileUnit(info, CodeStart, noChildren);
  CHECK_FALSE(makeDwarf(info.data, lineTable({.extendedLength = ~uint64_t(0) - 20})).check->readableAt(CodeStart));
  // (The length takes 10 bytes: the stated end is 10 bytes before the opcode.)
  // Past the end without wrapping: LLVM stops there.
  CHECK(makeDwarf(info.data, lineTable({.extendedLength = 1u << 20})).check->readableAt(CodeStart));
}

TEST_CASE("a unit is as readable as the units its DIEs refer to") {
  Bytes info;
  compileUnit(info, CodeStart, [](Bytes &b) { b.uleb(FunctionFromOrigin).u32(0); }); // refers to the second unit
  size_t second = info.data.size();
  compileUnit(info, CodeStart + 0x1000, [](Bytes &b) { b.uleb(FunctionWithFrameBase).uleb(1000); });
  // The reference: the second unit's offset, written over the placeholder.
  uint32_t target = uint32_t(second);
  std::memcpy(&info.data[second - 1 - 4], &target, 4); // before the unit's closing 0
  Dwarf dwarf = makeDwarf(info.data, lineTable({}));
  REQUIRE(dwarf.check->unitHeadsReadable());
  CHECK_FALSE(dwarf.check->readableAt(CodeStart + 0x1000 + 4));
  CHECK_FALSE(dwarf.check->readableAt(CodeStart + 4));
}

TEST_CASE("with the first units of .debug_info only, what may need a unit past them is told apart") {
  Bytes info;
  compileUnit(info, CodeStart, noChildren);
  compileUnit(info, CodeStart + 0x1000, [](Bytes &b) { b.uleb(FunctionFromOrigin).u32(0); }); // refers to the third
  size_t third = info.data.size();
  compileUnit(info, CodeStart + 0x2000, noChildren);
  uint32_t target = uint32_t(third);
  std::memcpy(&info.data[third - 1 - 4], &target, 4); // before the second unit's closing 0
  using Verdict = DwarfUnitCheck::Verdict;
  Dwarf whole = makeDwarf(info.data, lineTable({}));
  REQUIRE(whole.check->unitHeadsReadable());
  CHECK(whole.check->verdictAt(CodeStart + 0x1000 + 4) == Verdict::Readable);
  CHECK(whole.check->verdictAt(CodeStart + 0x5000) == Verdict::Readable); // no unit there: LLVM reads none

  Dwarf firstTwo = makeDwarf(info.data, lineTable({}), third);
  REQUIRE(firstTwo.check->unitHeadsReadable());
  CHECK(firstTwo.check->verdictAt(CodeStart + 4) == Verdict::Readable);
  CHECK(firstTwo.check->verdictAt(CodeStart + 0x1000 + 4) == Verdict::PastPartialSection); // its reference
  CHECK(firstTwo.check->verdictAt(CodeStart + 0x2000 + 4) == Verdict::PastPartialSection); // in the third unit
  CHECK(firstTwo.check->verdictAt(CodeStart + 0x5000) == Verdict::PastPartialSection); // a unit past them may hold it
}
