#include "stackwalk/core/DebugSectionTwin.h"

#include "CompressedElf.h"

#include "llvm/BinaryFormat/ELF.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::test;

TEST_CASE("a twin holds the .debug_* sections decompressed, in an ELF file of their own") {
  TempDir dir;
  const std::string text = std::string(5000, 'x') + "the strings of the unit";
  auto file = compressedFile(dir.file("lib.debug"), text);
  REQUIRE(hasCompressedSection(*file));
  auto twin = debugSectionTwin(*file, UINT64_MAX);
  REQUIRE(bool(twin));
  // Where a huge page starts, so that one page fault maps 2 MiB of it from the first byte.
  CHECK(uintptr_t((*twin)->getBufferStart()) % (uintptr_t(2) << 20) == 0);
  auto parsed = ModuleImage::fromFileBuffer(std::move(*twin), "twin");
  REQUIRE(bool(parsed));
  CHECK(debugStr(**parsed) == text);
  CHECK_FALSE(hasCompressedSection(**parsed));
  CHECK_FALSE(bool((*parsed)->section(".text")));
}

TEST_CASE("a twin for walks that read no variables leaves the location lists out; the largest section intact") {
  TempDir dir;
  std::string info;
  for (int i = 0; i < 20000; ++i) info += std::to_string(i * 7919 % 10007) + ' ';
  auto file = compressedFile(dir.file("lib.debug"), "strings",
                             {{".debug_info", info}, {".debug_loclists", "lists"}, {".debug_loc", "old lists"}});
  auto section = [](const ModuleImage &image, const char *name) {
    auto found = image.section(name);
    return found ? found->data.str() : "(none)";
  };
  for (TwinSections which : {TwinSections::All, TwinSections::WithoutLocationLists}) {
    bool all = which == TwinSections::All;
    CAPTURE(all);
    auto twin = debugSectionTwinImage(*file, UINT64_MAX, "twin", which);
    REQUIRE(twin);
    CHECK(section(*twin, ".debug_info") == info); // inflated beside the others, on a second thread
    CHECK(section(*twin, ".debug_str") == "strings");
    CHECK(section(*twin, ".debug_loclists") == (all ? "lists" : "(none)"));
    CHECK(section(*twin, ".debug_loc") == (all ? "old lists" : "(none)"));
    // .debug_info's bytes last (TwinLayout): the twin's last 4 KiB pages hold units a walk seldom reads.
    const char *infoStart = twin->section(".debug_info")->data.begin();
    for (const char *other : {".debug_str", ".debug_loclists", ".debug_loc"})
      if (auto found = twin->section(other)) CHECK(found->data.end() <= infoStart);
  }
}

TEST_CASE("sections claiming more than the debug budget are not decompressed") {
  TempDir dir;
  auto file = compressedFile(dir.file("lib.debug"), std::string(5000, 'x'));
  auto bytes = debugSectionTwin(*file, 4000);
  REQUIRE_FALSE(bool(bytes));
  llvm::consumeError(bytes.takeError());
  CHECK(bool(debugSectionTwin(*file, 5000 + 1000)));
}

TEST_CASE("a section's claimed alignment does not size the twin (fuzz/findings/objcopy-section-alignment-2pow40)") {
  // The finding: its DWARF does not inflate, but nothing may be allocated for the alignment.
  auto finding = contents(STACKWALK_FINDINGS_DIR "/objcopy-section-alignment-2pow40");
  auto image = ModuleImage::fromBytes(std::vector<uint8_t>(finding.begin(), finding.end()), "finding");
  REQUIRE(bool(image));
  auto twin = debugSectionTwin(**image, 64 << 20);
  if (!twin) llvm::consumeError(twin.takeError());

  // A good file with a section claiming 2^40 alignment has its twin as ever.
  TempDir dir;
  compressedFile(dir.file("lib.debug"), std::string(5000, 'x'));
  std::string bytes = contents(dir.file("lib.debug"));
  llvm::ELF::Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  llvm::ELF::Elf64_Shdr section;
  std::memcpy(&section, &bytes[header.e_shoff + sizeof section], sizeof section);
  section.sh_addralign = uint64_t(1) << 40;
  std::memcpy(&bytes[header.e_shoff + sizeof section], &section, sizeof section);
  auto aligned = ModuleImage::fromBytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), "aligned");
  REQUIRE(bool(aligned));
  auto alignedTwin = debugSectionTwin(**aligned, 64 << 20);
  REQUIRE(bool(alignedTwin));
  CHECK((*alignedTwin)->getBufferSize() < bytes.size() + 64 * 1024);
  auto parsed = ModuleImage::fromFileBuffer(std::move(*alignedTwin), "twin");
  REQUIRE(bool(parsed));
  CHECK(debugStr(**parsed) == std::string(5000, 'x'));
}
