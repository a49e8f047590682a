// A Breakpad symbol file's index as bytes (BreakpadSymbolIndex.cpp) and kept
// by the symbol cache (SymbolIndexCache): the file read back with its index
// answers every lookup as the parsed one; an index that does not fit its text
// is refused; a cache entry that does not check is made again.
#include "stackwalk/core/SymbolIndexCache.h"

#include "CompressedElf.h"

#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace stackwalk;
using namespace stackwalk::test;

namespace {

// Functions with lines and inlined calls, public symbols, STACK CFI and STACK WIN records.
const std::string Symbols = "MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n"
                            "INFO CODE_ID 5F000000A000\n"
                            "FILE 0 c:\\src\\app.c\n"
                            "FILE 1 c:\\src\\util.h\n"
                            "INLINE_ORIGIN 0 helper\n"
                            "PUBLIC 800 0 _init\n"
                            "FUNC 1000 40 8 first\n"
                            "1000 10 10 0\n"
                            "1010 30 11 0\n"
                            "FUNC 2000 100 0 second\n"
                            "INLINE 0 20 0 0 2010 40\n"
                            "2000 20 19 0\n"
                            "2020 e0 7 1\n"
                            "PUBLIC 3000 c _third@12\n"
                            "STACK CFI INIT 1000 40 .cfa: $esp 4 + .ra: .cfa 4 - ^\n"
                            "STACK CFI 1001 .cfa: $esp 8 + $ebp: .cfa 8 - ^\n"
                            "STACK WIN 4 2000 100 3 0 0 4 10 0 1 $T0 $ebp = $eip $T0 4 + ^ =\n"
                            "STACK WIN 0 3000 20 0 0 c 8 4 0 0 0\n";

std::unique_ptr<llvm::MemoryBuffer> text() { return llvm::MemoryBuffer::getMemBufferCopy(Symbols); }

// What every lookup gives at an offset, as one string.
std::string answers(const BreakpadSymbolFile &file, uint64_t offset) {
  std::string out;
  for (const SourceFrame &frame : file.frames(offset))
    out += frame.function + "@" + std::to_string(frame.functionStart.value_or(0)) + ":" + frame.file + ":" +
           std::to_string(frame.line.value_or(0)) + (frame.inlined ? " inlined" : "") + "; ";
  if (auto rules = file.cfiRules(offset))
    for (const auto &rule : *rules) out += rule.reg + "=" + rule.expression + "; ";
  if (auto win = file.windowsFrameInfo(offset)) out += "win " + std::to_string(win->start) + " " + win->program + "; ";
  out += "params " + std::to_string(file.parameterSize(offset).value_or(99));
  return out;
}

std::string refusal(std::vector<uint8_t> index) {
  auto file = BreakpadSymbolFile::withIndex(text(), "app.sym", index);
  return file ? "" : llvm::toString(file.takeError());
}

} // namespace

TEST_CASE("a symbol file read back with its index answers as the parsed one") {
  auto parsed = BreakpadSymbolFile::parse(text(), "app.sym");
  REQUIRE(bool(parsed));
  auto indexed = BreakpadSymbolFile::withIndex(text(), "app.sym", (*parsed)->serializedIndex());
  REQUIRE(bool(indexed));
  CHECK((*indexed)->header().debugId == (*parsed)->header().debugId);
  CHECK((*indexed)->header().codeId == "5F000000A000");
  CHECK((*indexed)->header().debugFile == "app.pdb");
  for (uint64_t offset : {0x700, 0x800, 0x1000, 0x1008, 0x1020, 0x2000, 0x2015, 0x2050, 0x3004, 0x4000}) {
    CAPTURE(offset);
    CHECK(answers(**indexed, offset) == answers(**parsed, offset));
  }
  CHECK(answers(**indexed, 0x2015).find("helper@") != std::string::npos);
}

TEST_CASE("an index that does not fit its text is refused") {
  auto parsed = BreakpadSymbolFile::parse(text(), "app.sym");
  REQUIRE(bool(parsed));
  std::vector<uint8_t> good = (*parsed)->serializedIndex();
  const std::string refused = "a symbol file index that does not fit its text";
  std::vector<uint8_t> truncated(good.begin(), good.end() - 3);
  CHECK(refusal(truncated) == refused);
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  CHECK(refusal(longer) == refused);
  CHECK(refusal({}) == refused);
  // The first function's record offset (after the five header strings and the count) past the text.
  size_t at = 0;
  for (int field = 0; field < 5; ++field) {
    uint64_t length;
    std::memcpy(&length, good.data() + at, 8);
    at += 8 + length;
  }
  std::vector<uint8_t> outside = good;
  uint64_t far = Symbols.size();
  std::memcpy(outside.data() + at + 8 + 16, &far, 8);
  CHECK(refusal(outside) == refused);
  // A count that claims more entries than the bytes hold.
  std::vector<uint8_t> claims = good;
  uint64_t many = uint64_t(1) << 60;
  std::memcpy(claims.data() + at, &many, 8);
  CHECK(refusal(claims) == refused);
  CHECK(refusal(good).empty());
}

TEST_CASE("an index entry that points at another record leads nowhere (found by fuzz_symbol_file)") {
  auto parsed = BreakpadSymbolFile::parse(text(), "app.sym");
  REQUIRE(bool(parsed));
  std::vector<uint8_t> index = (*parsed)->serializedIndex();
  size_t functions = 0;
  for (int field = 0; field < 5; ++field) {
    uint64_t length;
    std::memcpy(&length, index.data() + functions, 8);
    functions += 8 + length;
  }
  // Two functions (three words each) after their count, then the CFI ranges' count and the first range.
  size_t firstFunctionLine = functions + 8 + 16, firstCfiLine = functions + 8 + 2 * 24 + 8 + 16;
  auto pointAt = [&](size_t entry, const char *record) {
    uint64_t offset = Symbols.find(record);
    std::memcpy(index.data() + entry, &offset, 8);
  };
  pointAt(firstFunctionLine, "FUNC 2000");   // a function record of another address
  pointAt(firstCfiLine, "FUNC 1000");        // no CFI record at all
  auto indexed = BreakpadSymbolFile::withIndex(text(), "app.sym", index);
  REQUIRE(bool(indexed));
  CHECK((*indexed)->frames(0x1008).empty());
  CHECK_FALSE((*indexed)->cfiRules(0x1008));
  CHECK_FALSE((*indexed)->parameterSize(0x1008));
  CHECK((*indexed)->frames(0x2015).size() == 2); // the entries left alone still lead to their records
}

TEST_CASE("the symbol cache keeps a file's index, and makes again an entry that does not check") {
  TempDir dir;
  std::string path = dir.file("app.sym");
  std::ofstream(path, std::ios::binary) << Symbols;
  SymbolIndexCache cache(dir.file("cache"));
  std::string entry = cache.entryPath(Symbols);
  auto first = cache.open(path);
  REQUIRE(bool(first));
  REQUIRE(llvm::sys::fs::exists(entry));
  std::string stored = contents(entry);
  auto second = cache.open(path);
  REQUIRE(bool(second));
  CHECK(answers(**second, 0x2015) == answers(**first, 0x2015));
  for (bool truncate : {true, false}) {
    damage(entry, truncate);
    auto again = cache.open(path);
    REQUIRE(bool(again));
    CHECK(answers(**again, 0x1008) == answers(**first, 0x1008));
    CHECK(contents(entry) == stored); // made again
  }
  std::ofstream(dir.file("other.sym"), std::ios::binary) << "not a symbol file";
  auto other = cache.open(dir.file("other.sym"));
  REQUIRE_FALSE(bool(other));
  llvm::consumeError(other.takeError());
}
