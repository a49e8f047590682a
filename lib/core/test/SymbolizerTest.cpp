#include "stackwalk/core/Symbolizer.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace stackwalk;

TEST_CASE("debug info whose units do not parse is left out; symbols still name frames (found by fuzz_module_image)") {
  // A MinGW program whose .debug_info units name abbreviation sets that do not
  // exist: LLVM 19's inline lookup dereferences a null DIE on it.
  std::ifstream file(STACKWALK_FINDINGS_DIR "/llvm19-dwarf-updateAddressDieMap-null-die", std::ios::binary);
  REQUIRE(file);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  auto image = ModuleImage::fromBytes(std::move(bytes), "finding");
  REQUIRE(bool(image));
  Module module;
  module.name = "finding";
  module.base = (*image)->preferredBase();
  module.size = 1 << 20;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer;
  size_t named = 0;
  for (const LoadSegment &segment : module.image->segments()) {
    if (!segment.executable) continue;
    const auto &frames = symbolizer.symbolize(module, segment.vaddr + segment.memSize / 2);
    for (const SourceFrame &frame : frames) {
      CHECK_FALSE(frame.line); // every unit of this file is broken: no line from its DWARF
      named += !frame.function.empty();
    }
  }
  CHECK(named > 0);
}

TEST_CASE("a CodeView record that the section maps past the end of the file is not read (found by fuzz_module_image)") {
  std::ifstream file(STACKWALK_FINDINGS_DIR "/llvm19-coff-codeview-record-past-file", std::ios::binary);
  REQUIRE(file);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  auto image = ModuleImage::fromBytes(std::move(bytes), "finding");
  REQUIRE(bool(image)); // the PE parses; only its CodeView record is out of the file
  CHECK_FALSE((*image)->pdbReference());
}
