#include "../src/Arm64Reachability.h"

#include "SyntheticStack.h"
#include "YamlImage.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

// arm64 code (.text at 0x1000), no symbols:
//   f1 0x1000: cbz x0, 0x1008; ret; 0x1008: b 0x1018; nop x3 (never run); 0x1018: brk #0; nop
//   f2 0x1020: br x16
//   f3 0x1024: bl f1; b 0x1028 (a loop)
//   f4 0x102c: tbz w0, #0, 0x1034; b f1 (a tail call); 0x1034: ret
//   f5 0x1038: udf #0
const char *const kCode = "400000b4c0035fd6040000141f2003d51f2003d51f2003d5000020d41f2003d500021fd6f7ffff97ffffff17"
                          "40000036f4ffff17c0035fd600000000";
constexpr uint64_t Base = 0x5500000000;

std::optional<bool> reaches(uint64_t entry, uint64_t pc) {
  auto target = makeTarget(Arch::Arm64, OS::Linux, makeMemory({}), {},
                           {makeModule("prog", Base + 0x1000, 0x1000, textImage("EM_AARCH64", kCode, "", "prog"))});
  return arm64MayReach(*target, Base + entry, Base + pc);
}

} // namespace

TEST_CASE("arm64 reachability follows branches both ways to each return or trap", "[arm64][reach]") {
  CHECK(reaches(0x1000, 0x1004) == true);  // the branch not taken
  CHECK(reaches(0x1000, 0x1018) == true);  // taken, then b
  CHECK(reaches(0x1000, 0x100c) == false); // after b: never run
  CHECK(reaches(0x1000, 0x101c) == false); // after brk
}

TEST_CASE("arm64 reachability goes past calls, into tail calls, and around loops", "[arm64][reach]") {
  CHECK(reaches(0x1024, 0x1028) == true);
  CHECK(reaches(0x1024, 0x1000) == false); // f1 is called: its code returns to f3, it is no path of f3's
  CHECK(reaches(0x102c, 0x1018) == true);  // through the tail call to f1
  CHECK(reaches(0x102c, 0x1034) == true);
  CHECK(reaches(0x102c, 0x100c) == false);
}

TEST_CASE("arm64 reachability is not told past an indirect jump, zeros, or code nothing holds", "[arm64][reach]") {
  CHECK_FALSE(reaches(0x1020, 0x1000).has_value()); // br x16
  CHECK_FALSE(reaches(0x1038, 0x1000).has_value()); // udf
  CHECK_FALSE(reaches(0x3000, 0x1000).has_value()); // outside the module
}
