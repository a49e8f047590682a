#include "ProcessMaps.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

TEST_CASE("/proc/PID/maps lines become regions, file mappings and the vDSO") {
  auto maps = live::parseProcessMaps(
      "55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
      "55d0c0a01000-55d0c0a02000 r-xp 00001000 08:01 1234                       /usr/bin/prog\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f0000100000-7f0000101000 r-xp 00002000 08:01 99                         /tmp/my lib.so (deleted)\n"
      "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]\n"
      "garbage line\n"
      "7ffe00000000-7ffe00001000 rw-p 00000000 00:00 0\n");
  REQUIRE(maps.regions.size() == 6);
  CHECK(maps.regions[1].executable);
  CHECK_FALSE(maps.regions[1].writable);
  CHECK(maps.regions[2].writable);
  REQUIRE(maps.files.size() == 3);
  CHECK(maps.files[1].start == 0x55d0c0a01000u);
  CHECK(maps.files[1].fileOffset == 0x1000u);
  CHECK(maps.files[2].path == "/tmp/my lib.so (deleted)");
  REQUIRE(maps.vdso);
  CHECK(maps.vdso->start == 0x7ffd00000000u);
}
