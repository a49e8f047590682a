// The entry function of a program known by its Breakpad symbol file alone,
// found by the entry point the dump's auxiliary vector records. dump_syms's
// file of an i386 program: _start a PUBLIC symbol whose STACK CFI is its entry
// rule (the undefined return address cannot be written), main a FUNC.
#include "SyntheticStack.h"

#include "stackwalk/core/Auxv.h"
#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/unwinder/EntryFunctionUnwinder.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Base = 0x40000000, Stack = 0x8000;

std::unique_ptr<Target> programTarget(std::optional<uint64_t> entry) {
  auto file = BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy("MODULE Linux x86 00 app\n"
                                                                            "FUNC 11d0 c7 0 main\n"
                                                                            "PUBLIC 12a0 0 _start\n"
                                                                            "STACK CFI INIT 12a0 2c .cfa: $esp 4 + "
                                                                            ".ra: .cfa -4 + ^\n"),
                                        "app.sym");
  REQUIRE(bool(file));
  Module module = makeModule("app", Base, 0x5000);
  module.symbolFile = std::move(*file);
  auto target = makeTarget(Arch::X86, OS::Linux, makeMemory({{Stack, std::vector<uint8_t>(64)}}), {},
                           {std::move(module)});
  if (entry) target->process.auxv = {{AT_PHDR, Base + 0x34}, {AT_ENTRY, *entry}};
  return target;
}

} // namespace

TEST_CASE("entry function by symbol file: the function at the recorded entry point ends the walk", "[entry]") {
  auto target = programTarget(Base + 0x12a0);
  // _start's call of __libc_start_main returned to _start+0x27.
  Frame start = makeFrame(*target, Base + 0x12c7, Stack, FrameTrust::Cfi, {}, Arch::X86);
  UnwindResult r = EntryFunctionUnwinder().unwind(start, *target);
  CHECK(r.status == UnwindResult::Status::EndOfStack);
}

TEST_CASE("entry function by symbol file: other functions, and dumps without an entry point, are not it", "[entry]") {
  SECTION("main, in a dump that records the entry point") {
    auto target = programTarget(Base + 0x12a0);
    Frame main = makeFrame(*target, Base + 0x125b, Stack, FrameTrust::Cfi, {}, Arch::X86);
    CHECK(EntryFunctionUnwinder().unwind(main, *target).status == UnwindResult::Status::NoInfo);
  }
  SECTION("_start, in a dump without an auxiliary vector") {
    auto target = programTarget(std::nullopt);
    Frame start = makeFrame(*target, Base + 0x12c7, Stack, FrameTrust::Cfi, {}, Arch::X86);
    CHECK(EntryFunctionUnwinder().unwind(start, *target).status == UnwindResult::Status::NoInfo);
  }
  SECTION("an entry point inside a function, not at its start") {
    auto target = programTarget(Base + 0x12a4);
    Frame start = makeFrame(*target, Base + 0x12c7, Stack, FrameTrust::Cfi, {}, Arch::X86);
    CHECK(EntryFunctionUnwinder().unwind(start, *target).status == UnwindResult::Status::NoInfo);
  }
}
