// A core written by CoreWriter reads back through the ELF core loader: the
// same threads, registers, memory, command line and mappings.
#include "CoreWriter.h"

#include "stackwalk/elfcore/ElfCoreLoader.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

using namespace stackwalk;

TEST_CASE("a written core loads back: threads, registers, memory, process and files") {
  live::CoreContents contents;
  contents.pid = 4242;
  contents.name = "prog";
  contents.arguments = "prog --flag";
  for (uint32_t tid : {4242u, 4243u}) {
    std::vector<uint8_t> regs(27 * 8, 0);
    uint64_t rip = 0x401000 + tid, rsp = 0x7ffd0000 + tid; // user_regs_struct: rip at 16, rsp at 19
    std::memcpy(&regs[16 * 8], &rip, 8);
    std::memcpy(&regs[19 * 8], &rsp, 8);
    contents.threads.push_back({.tid = tid, .userRegs = regs, .fpRegs = {}, .xstate = {}});
  }
  contents.files.push_back({0x400000, 0x402000, 0, "/usr/bin/prog"});
  contents.regions.push_back({0x7ffd0000, 0x7ffd2000, true, true, false});
  contents.memory.push_back({0x7ffd0000, std::vector<uint8_t>(0x2000, 0xab)});
  std::string path = (std::filesystem::temp_directory_path() / "stackwalk-corewriter-test.core").string();
  REQUIRE_FALSE(bool(live::writeElfCore(path, contents)));

  auto target = loadElfCore(path);
  std::remove(path.c_str());
  REQUIRE(bool(target));
  CHECK((*target)->process.pid == 4242u);
  CHECK((*target)->process.commandLine == "prog --flag");
  REQUIRE((*target)->threads.size() == 2);
  CHECK((*target)->threads[1].tid == 4243u);
  CHECK((*target)->threads[1].context.pc() == 0x401000u + 4243);
  CHECK((*target)->threads[1].context.sp() == 0x7ffd0000u + 4243);
  CHECK((*target)->readValue<uint8_t>(0x7ffd1fff) == 0xab);
  CHECK_FALSE((*target)->readValue<uint8_t>(0x7ffd2000));
  CHECK((*target)->warnings.empty());
}

TEST_CASE("a core with no thread is not written") {
  CHECK(llvm::toString(live::writeElfCore("/nonexistent/x.core", {})) == "no thread to write");
}

TEST_CASE("pages read in one go across mappings keep each mapping's permissions") {
  live::CoreContents contents;
  std::vector<uint8_t> regs(27 * 8, 0);
  contents.threads.push_back({.tid = 7, .userRegs = regs, .fpRegs = {}, .xstate = {}});
  // A module's read-only headers, then its text, read as one range; then a page
  // that no mapping covers.
  contents.regions.push_back({0x400000, 0x401000, true, false, false});
  contents.regions.push_back({0x401000, 0x403000, true, false, true});
  contents.memory.push_back({0x400000, std::vector<uint8_t>(0x4000, 0xcc)});
  std::string path = (std::filesystem::temp_directory_path() / "stackwalk-corewriter-flags.core").string();
  REQUIRE_FALSE(bool(live::writeElfCore(path, contents)));

  auto target = loadElfCore(path);
  std::remove(path.c_str());
  REQUIRE(bool(target));
  CHECK_FALSE((*target)->isExecutable(0x400800));
  CHECK((*target)->isExecutable(0x401000));
  CHECK((*target)->isExecutable(0x402fff));
  CHECK_FALSE((*target)->isExecutable(0x403800));
  CHECK((*target)->readValue<uint8_t>(0x403fff) == 0xcc);
}
