#include "stackwalk/core/BreakpadSymbolFile.h"

#include "llvm/ADT/StringExtras.h"

#include <catch2/catch.hpp>

#include <map>

using namespace stackwalk;

namespace {

std::unique_ptr<BreakpadSymbolFile> parse(const std::string &text) {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy(text), "test.sym");
  REQUIRE(bool(file));
  return std::move(*file);
}

bool parses(const std::string &text) {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy(text), "test.sym");
  if (file) return true;
  llvm::consumeError(file.takeError());
  return false;
}

// A module with two functions (the second with two levels of inlined calls,
// in the current INLINE form), public symbols before, between and after them,
// and CFI for the first.
const char *const Symbols = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 app\n"
                            "INFO CODE_ID 89674523AB01EFCD\n"
                            "FILE 0 /src/app.c\n"
                            "FILE 1 /src/util.h\n"
                            "INLINE_ORIGIN 0 helper\n"
                            "INLINE_ORIGIN 1 inner(int)\n"
                            "PUBLIC 800 0 _init\n"
                            "FUNC 1000 40 0 first\n"
                            "1000 10 10 0\n"
                            "1010 30 11 0\n"
                            "PUBLIC 1100 0 between\n"
                            "FUNC 2000 100 0 second\n"
                            "INLINE 0 20 0 0 2010 40 2080 10\n"
                            "INLINE 1 5 1 1 2020 10\n"
                            "2000 20 19 0\n"
                            "2020 10 7 1\n"
                            "2030 d0 21 0\n"
                            "PUBLIC 3000 0 _fini\n"
                            "STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                            "STACK CFI 1001 .cfa: $rsp 16 + $rbp: .cfa -16 + ^\n"
                            "STACK CFI 1004 .cfa: $rbp 16 +\n";

} // namespace

TEST_CASE("a symbol file's MODULE and INFO records are its header") {
  auto file = parse(Symbols);
  CHECK(file->header().os == "Linux");
  CHECK(file->header().arch == "x86_64");
  CHECK(file->header().debugId == "0123456789ABCDEF0123456789ABCDEF0");
  CHECK(file->header().debugFile == "app");
  CHECK(file->header().codeId == "89674523AB01EFCD");
}

TEST_CASE("text without a MODULE record is no symbol file") {
  CHECK_FALSE(parses("FUNC 0 1 0 f\n"));
  CHECK_FALSE(parses(""));
  CHECK_FALSE(parses("MODULE Linux\n"));
}

TEST_CASE("a FUNC record and its line records name an offset") {
  auto file = parse(Symbols);
  auto frames = file->frames(0x1018);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].function == "first");
  CHECK(frames[0].functionStart == 0x1000u);
  CHECK(frames[0].file == "/src/app.c");
  CHECK(frames[0].line == 11u);
  CHECK_FALSE(frames[0].inlined);
  CHECK(file->frames(0x103f).front().function == "first");
}

TEST_CASE("inlined calls: innermost first, each at the call site inside the next") {
  auto file = parse(Symbols);
  auto frames = file->frames(0x2024);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].function == "inner(int)");
  CHECK(frames[0].file == "/src/util.h");
  CHECK(frames[0].line == 7u); // the line record's
  CHECK(frames[0].inlined);
  CHECK(frames[1].function == "helper");
  CHECK(frames[1].line == 5u); // where helper called inner, in util.h
  CHECK(frames[1].file == "/src/util.h");
  CHECK(frames[1].inlined);
  CHECK(frames[2].function == "second");
  CHECK(frames[2].line == 20u); // where second called helper, in app.c
  CHECK(frames[2].file == "/src/app.c");
  CHECK_FALSE(frames[2].inlined);
  // helper's second range holds no inner call.
  auto outer = file->frames(0x2085);
  REQUIRE(outer.size() == 2);
  CHECK(outer[0].function == "helper");
  CHECK(outer[1].function == "second");
}

TEST_CASE("the older INLINE form has no call site's file: the line record's is given") {
  auto file = parse("MODULE Linux x86_64 00 app\n"
                    "FILE 0 a.c\n"
                    "INLINE_ORIGIN 0 0 helper\n"
                    "FUNC 100 20 0 outer\n"
                    "INLINE 0 42 0 100 10\n"
                    "100 20 3 0\n");
  auto frames = file->frames(0x104);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].function == "helper"); // not "0 helper": the older INLINE_ORIGIN has a file id
  CHECK(frames[1].function == "outer");
  CHECK(frames[1].line == 42u);
  CHECK(frames[1].file == "a.c");
}

TEST_CASE("a PUBLIC symbol names what follows it, up to the next function") {
  auto file = parse(Symbols);
  auto frames = file->frames(0x900);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].function == "_init");
  CHECK(frames[0].functionStart == 0x800u);
  CHECK(frames[0].file.empty());
  CHECK(file->frames(0x1100).front().function == "between");
  CHECK(file->frames(0x5000).front().function == "_fini");
  // Past `first` and before `between`: `first` ended, and _init lies before it.
  CHECK(file->frames(0x1050).empty());
  CHECK(file->frames(0x10).empty());
}

TEST_CASE("a PUBLIC symbol does not name a function without one that starts after it") {
  // dump_syms's file of a library without debug info: its exported functions
  // as PUBLIC symbols, an FDE for each function, static ones included.
  auto file = parse("MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so\n"
                    "PUBLIC 1000 0 exported\n"
                    "PUBLIC 1100 0 __clone3\n"
                    "STACK CFI INIT 1000 30 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                    "STACK CFI INIT 1040 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                    "STACK CFI INIT 1100 17 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                    "STACK CFI INIT 1121 15 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n");
  CHECK(file->frames(0x1010).front().function == "exported");
  CHECK(file->frames(0x1035).front().function == "exported"); // between the ranges: nothing else starts
  CHECK(file->frames(0x1050).empty());                        // a static function's code, at 0x1040
  CHECK(file->frames(0x1060).front().function == "exported"); // past its range again
  // The child's code of glibc's __clone3 has an FDE of its own, at an odd address.
  CHECK(file->frames(0x1125).front().function == "__clone3");
  CHECK(file->describesCodeAt(0x1050)); // still code, by its unwind record
  // A PE module's: the ranges are .pdata entries, which a function's separated
  // parts have too; the public symbol before names them, as WinDbg does.
  auto pe = parse("MODULE windows x86_64 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n"
                  "PUBLIC 1000 0 exported\n"
                  "STACK CFI INIT 1000 30 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                  "STACK CFI INIT 1040 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n");
  CHECK(pe->frames(0x1050).front().function == "exported");
}

TEST_CASE("STACK CFI: the INIT record's rules, then each delta at or below the offset") {
  auto file = parse(Symbols);
  auto at = [&](uint64_t offset) {
    std::map<std::string, std::string> rules;
    if (auto found = file->cfiRules(offset))
      for (const auto &rule : *found) rules[rule.reg] = rule.expression;
    return rules;
  };
  CHECK(at(0x1000) == std::map<std::string, std::string>{{".cfa", "$rsp 8 +"}, {".ra", ".cfa -8 + ^"}});
  CHECK(at(0x1002) == std::map<std::string, std::string>{
                          {".cfa", "$rsp 16 +"}, {".ra", ".cfa -8 + ^"}, {"$rbp", ".cfa -16 + ^"}});
  CHECK(at(0x1030)[".cfa"] == "$rbp 16 +");
  CHECK_FALSE(file->cfiRules(0x1040));
  CHECK_FALSE(file->cfiRules(0xfff));
}

TEST_CASE("malformed records are skipped, and CRLF line ends are read") {
  auto file = parse("MODULE windows x86_64 00 app.pdb\r\n"
                    "FUNC zz 10 0 broken\r\n"
                    "FUNC 100\r\n"
                    "PUBLIC\r\n"
                    "STACK CFI INIT 1\r\n"
                    "INLINE 0\r\n"
                    "FILE x\r\n"
                    "FUNC m 200 10 0 kept\r\n"
                    "200 10 9 7\r\n");
  auto frames = file->frames(0x204);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].function == "kept");
  CHECK(frames[0].line == 9u);
  CHECK(frames[0].file.empty()); // FILE 7 is not declared
  CHECK(file->frames(0x104).empty());
  CHECK_FALSE(file->cfiRules(1));
}

TEST_CASE("STACK WIN: a record's sizes and program, FrameData before FPO, the latest start of overlapping records") {
  auto file = parse("MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n"
                    "FUNC 1000 40 8 f\n"
                    "PUBLIC 2000 c _g@12\n"
                    "STACK WIN 4 1000 40 3 0 8 0 10 0 1 $T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =\n"
                    "STACK WIN 4 1001 3f 2 0 8 4 10 0 1 $T0 $ebp = $esp $T0 4 + =\n"
                    "STACK WIN 0 1000 40 3 0 8 4 10 0 0 1\n"
                    "STACK WIN 0 2000 20 0 0 c 8 4 0 0 0\n"
                    "STACK WIN 1 3000 20 0 0 0 0 0 0 0 0\n"
                    "STACK WIN 4 4000 zz 0 0 0 0 0 0 0 0\n"
                    "STACK WIN 4 5000 10 0 0 0 0 0 0 1\n");
  using Info = WindowsFrameInfo;
  auto first = file->windowsFrameInfo(0x1000);
  REQUIRE(first);
  CHECK(first->type == Info::FrameData);
  CHECK(first->start == 0x1000);
  CHECK(first->size == 0x40);
  CHECK(first->prologSize == 3);
  CHECK(first->parameterSize == 8);
  CHECK(first->savedRegisterSize == 0);
  CHECK(first->localSize == 0x10);
  CHECK(first->program == "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + =");
  // Past the first push of the prolog, the record that starts there.
  auto later = file->windowsFrameInfo(0x1010);
  REQUIRE(later);
  CHECK(later->start == 0x1001);
  CHECK(later->savedRegisterSize == 4);
  // FPO data where no frame data is; without a program, whether ebp is the function's own.
  auto fpo = file->windowsFrameInfo(0x2004);
  REQUIRE(fpo);
  CHECK(fpo->type == Info::Fpo);
  CHECK(fpo->program.empty());
  CHECK_FALSE(fpo->allocatesBasePointer);
  CHECK(fpo->parameterSize == 0xc);
  CHECK_FALSE(file->windowsFrameInfo(0x2020));
  CHECK_FALSE(file->windowsFrameInfo(0x3000)); // type 1 (trap) is no unwind data
  CHECK_FALSE(file->windowsFrameInfo(0x4000)); // malformed size
  CHECK_FALSE(file->windowsFrameInfo(0x5000)); // no program though one is announced
}

TEST_CASE("a function's parameter size, from its FUNC record or its PUBLIC symbol") {
  auto file = parse("MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n"
                    "FUNC 1000 40 8 f\n"
                    "PUBLIC m 2000 c _g@12\n");
  CHECK(file->parameterSize(0x1010) == 8u);
  CHECK(file->parameterSize(0x2100) == 0xcu);
  CHECK_FALSE(file->parameterSize(0x500));
  CHECK_FALSE(file->hasFunctionAt(0x2100)); // a PUBLIC symbol is no FUNC record
}

TEST_CASE("code a symbol file describes: FUNC and unwind records; a PUBLIC symbol where no unwind record could bound it, or up to the next record where unwind records are few") {
  auto withoutUnwind = parse("MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 app.pdb\n"
                             "FUNC 1000 40 8 f\n"
                             "PUBLIC m 2000 c _g@12\n");
  CHECK(withoutUnwind->describesCodeAt(0x1010));
  CHECK(withoutUnwind->describesCodeAt(0x2100)); // the PUBLIC symbol's extent is all there is
  CHECK_FALSE(withoutUnwind->describesCodeAt(0x500));
  // dump_syms's file of an ELF program: _init and _fini are PUBLIC symbols
  // without CFI, main a FUNC, _start CFI; past _fini lies the data segment.
  auto elf = parse("MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 inl\n"
                   "PUBLIC 1000 0 _init\n"
                   "FUNC 1060 27 0 main\n"
                   "PUBLIC 1090 0 _start\n"
                   "PUBLIC 11bc 0 _fini\n"
                   "STACK CFI INIT 1090 26 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                   "STACK CFI INIT 1060 27 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n");
  CHECK(elf->describesCodeAt(0x1070));  // FUNC
  CHECK(elf->describesCodeAt(0x10b0));  // _start's CFI
  CHECK_FALSE(elf->describesCodeAt(0x105f)); // after _init, in the PLT: main's address less one
  CHECK_FALSE(elf->describesCodeAt(0x3dd7)); // "_fini+0x2c1b": the data segment
  // A program built without unwind tables but for one object: PUBLIC symbols
  // are most of what the file says, each up to the next record.
  std::string sparseText = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 rts\n"
                           "PUBLIC 1000 0 _init\n";
  for (int i = 0; i < 10; ++i) sparseText += "PUBLIC " + llvm::utohexstr(0x2000 + 0x100 * i) + " 0 f" + std::to_string(i) + "\n";
  sparseText += "PUBLIC 4000 0 g\n"
                "STACK CFI INIT 4040 20 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
                "PUBLIC 5000 0 last\n";
  auto sparse = parse(sparseText);
  CHECK(sparse->describesCodeAt(0x2050));        // f0, before f1
  CHECK(sparse->describesCodeAt(0x2950));        // f9, before g
  CHECK(sparse->describesCodeAt(0x4020));        // g, before the record at 0x4040
  CHECK(sparse->describesCodeAt(0x4050));        // the record's own range
  CHECK_FALSE(sparse->describesCodeAt(0x4080));  // after that record: not g's
  CHECK_FALSE(sparse->describesCodeAt(0x1050));  // after _init: the PLT
  CHECK_FALSE(sparse->describesCodeAt(0x5050));  // after the last symbol: nothing bounds it
  CHECK_FALSE(sparse->describesCodeAt(0x500));   // before any
  auto win = parse("MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 k.pdb\n"
                   "PUBLIC 2000 c _g@12\n"
                   "STACK WIN 4 2000 40 3 0 c 0 8 0 1 $T0 $ebp = $eip $T0 4 + ^ =\n");
  CHECK(win->describesCodeAt(0x2010));
  CHECK_FALSE(win->describesCodeAt(0x2100));
}
