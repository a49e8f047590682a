#include "stackwalk/core/PerfMap.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

TEST_CASE("perf map lines name JIT code; the latest line wins") {
  PerfMap map = PerfMap::parse("7f0000001000 40 LazyCompile:~main app.js:1\n"
                               "0x7f0000001040 0x20 stub\n"
                               "7f0000001000 10 replaced\n");
  REQUIRE(map.size() == 3);
  CHECK(map.lookup(0x7f0000001004)->name == "replaced");
  CHECK(map.lookup(0x7f0000001020)->name == "LazyCompile:~main app.js:1");
  CHECK(map.lookup(0x7f000000105f)->name == "stub");
  CHECK(map.lookup(0x7f0000001060) == nullptr);
  CHECK(map.lookup(0x1000) == nullptr);
}

TEST_CASE("malformed perf map lines are skipped and counted") {
  PerfMap map = PerfMap::parse("zz 10 bad\n7f00 0 empty\n7f00\n7f00 10\nffffffffffffffff 10 wraps\n7f00 10 good\n\n");
  CHECK(map.size() == 1);
  CHECK(map.malformedLines() == 5);
  CHECK(map.lookup(0x7f05)->name == "good");
}

TEST_CASE("a wide perf map line shows where no later line covers an address, and a later wide line covers all") {
  PerfMap map = PerfMap::parse("1000 100000 wide\n"
                               "2000 10 first\n"
                               "2008 10 second\n"
                               "9000 10 third\n"
                               "8000 2000 wider-later\n");
  CHECK(map.lookup(0xfff) == nullptr);
  CHECK(map.lookup(0x1000)->name == "wide");
  CHECK(map.lookup(0x2004)->name == "first");
  CHECK(map.lookup(0x2008)->name == "second");
  CHECK(map.lookup(0x2017)->name == "second");
  CHECK(map.lookup(0x2018)->name == "wide");
  CHECK(map.lookup(0x9004)->name == "wider-later");
  CHECK(map.lookup(0xa000)->name == "wide");
  CHECK(map.lookup(0x100fff)->name == "wide");
  CHECK(map.lookup(0x101000) == nullptr);
}
