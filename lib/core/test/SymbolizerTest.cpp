#include "stackwalk/core/Symbolizer.h"

#include "CompressedElf.h"
#include "ModuleFiles.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace stackwalk;

namespace {
// A fuzz finding as a module loaded at its preferred base.
Module findingModule(const char *name) {
  std::ifstream file(std::string(STACKWALK_FINDINGS_DIR "/") + name, std::ios::binary);
  REQUIRE(file);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  auto image = ModuleImage::fromBytes(std::move(bytes), "finding");
  REQUIRE(bool(image));
  Module module;
  module.name = "finding";
  module.base = (*image)->preferredBase();
  module.size = 1 << 20;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  return module;
}

// What the symbolizer makes of the middle of each executable segment of a
// fuzz finding, as fuzz_module_image asks.
std::vector<SourceFrame> symbolizeFinding(const char *name) {
  Module module = findingModule(name);
  Symbolizer symbolizer;
  std::vector<SourceFrame> frames;
  for (const LoadSegment &segment : module.image->segments())
    if (segment.executable)
      for (const SourceFrame &frame : symbolizer.symbolize(module, segment.vaddr + segment.memSize / 2))
        frames.push_back(frame);
  return frames;
}
} // namespace

// MinGW programs with malformed DWARF on which LLVM 19 reads far out of bounds
// (the sanitizer build of these tests would report it) or dereferences a null
// DIE; DwarfUnitCheckTest has the cases one by one.
TEST_CASE("debug info LLVM cannot read safely is left out; symbols still name frames (found by fuzz_module_image)") {
  const char *finding = GENERATE("llvm19-dwarf-updateAddressDieMap-null-die", "llvm19-dwarf-skipValue-uleb128-out-of-bounds",
                                 "llvm19-dwarf-line-prologue-extractValue");
  CAPTURE(finding);
  std::vector<SourceFrame> frames = symbolizeFinding(finding);
  REQUIRE_FALSE(frames.empty());
  for (const SourceFrame &frame : frames) {
    CHECK_FALSE(frame.function.empty());
    CHECK_FALSE(frame.line); // the unit there is unreadable: no line from its DWARF
  }
}

// LLVM 19 names a nameless section symbol after its section and, for one in
// no section, reads the section header one past the table (the sanitizer build
// of these tests would report it): the table is refused instead.
TEST_CASE("a symbol table LLVM would read past the section headers is refused (found by fuzz_module_image)") {
  Module module = findingModule("llvm19-elf-nameless-section-symbol-in-no-section");
  Symbolizer symbolizer;
  CHECK(symbolizer.symbolize(module, module.base + 0x1000).empty());
  CHECK(symbolizer.unusableSymbols(*module.image).find("nameless section symbol") != std::string::npos);
}

TEST_CASE("a CodeView record that the section maps past the end of the file is not read (found by fuzz_module_image)") {
  // The second: a first section holds the record's start but not its size, so
  // LLVM maps it through a later section.
  const char *finding = GENERATE("llvm19-coff-codeview-record-past-file", "llvm19-coff-codeview-record-past-file-second-section");
  CAPTURE(finding);
  std::ifstream file(std::string(STACKWALK_FINDINGS_DIR "/") + finding, std::ios::binary);
  REQUIRE(file);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  auto image = ModuleImage::fromBytes(std::move(bytes), "finding");
  REQUIRE(bool(image)); // the PE parses; only its CodeView record is out of the file
  CHECK_FALSE((*image)->pdbReference());
}

TEST_CASE("a stripped DLL's exports name only the functions they start (the function table says where each begins)") {
  std::ifstream file(STACKWALK_CORE_TEST_DATA "/pdata.dll", std::ios::binary);
  REQUIRE(file);
  auto image = ModuleImage::fromBytes({std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()}, "pdata.dll");
  REQUIRE(bool(image));
  Module module;
  module.name = "pdata.dll";
  module.base = (*image)->preferredBase();
  module.size = 0x10000;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer;
  auto name = [&](uint64_t rva) {
    const std::vector<SourceFrame> &frames = symbolizer.symbolize(module, module.base + rva);
    return frames.empty() ? std::string() : frames.back().function;
  };
  // pdata.c's functions: stackwalk_exported at 0x1370, unexported at 0x13a0,
  // stackwalk_caller at 0x1420 (objdump -x pdata.dll).
  CHECK(name(0x1380) == "stackwalk_exported");
  CHECK(name(0x13c0).empty()); // LLVM alone: stackwalk_exported+0x50
  CHECK(name(0x1425) == "stackwalk_caller");
}

namespace {
// This test program's file, its debug info compressed, as a module loaded where the file says.
Module compressedModule(const test::TempDir &dir) {
  Module module;
  module.name = "core_tests";
  module.image = test::compressedFile(dir.file("core_tests"), "strings");
  module.base = module.image->preferredBase();
  module.size = 1 << 30;
  return module;
}

std::string describe(const std::vector<SourceFrame> &frames) {
  std::string text;
  for (const SourceFrame &frame : frames)
    text += frame.function + " " + std::to_string(frame.functionStart.value_or(0)) + " " + frame.file + ":" +
            std::to_string(frame.line.value_or(0)) + (frame.inlined ? " inlined; " : "; ");
  return text;
}

// compressedModule's file prefetched by one Symbolizer, beside one that reads it when asked.
struct PrefetchedModule {
  PrefetchedModule() {
    REQUIRE(main);
    prefetching.prefetchDebugInfo(module);
  }
  test::TempDir dir;
  Module module = compressedModule(dir);
  std::optional<uint64_t> main = module.image->symbolAddress("main");
  Symbolizer prefetching, plain;
};
} // namespace

TEST_CASE("a debug file prefetched on another thread names frames as one inflated when they are named") {
  PrefetchedModule files;
  auto &[dir, module, main, prefetching, plain] = files;
  prefetching.prefetchDebugInfo(module); // once per file
  CHECK(prefetching.prefetchedFiles() == 1);
  std::string named = describe(prefetching.symbolize(module, *main + 1));
  CHECK(prefetching.prefetchedFiles() == 0); // read by the first name
  CHECK_FALSE(prefetching.inflating());
  CHECK(named.find("main ") == 0);
  CHECK(named == describe(plain.symbolize(module, *main + 1)));
  prefetching.prefetchDebugInfo(module); // already read
  CHECK(prefetching.prefetchedFiles() == 0);
}

TEST_CASE("a prefetch cancelled, as for debug info the budget refuses once it started, is gone unread") {
  PrefetchedModule files;
  auto &[dir, module, main, prefetching, plain] = files;
  REQUIRE(prefetching.prefetchedFiles() == 1);
  module.debugInfoRefused = true;
  prefetching.cancelPrefetch(module);
  CHECK(prefetching.prefetchedFiles() == 0);
  CHECK_FALSE(prefetching.inflating());
  CHECK(describe(prefetching.symbolize(module, *main + 1)) == describe(plain.symbolize(module, *main + 1)));
}

TEST_CASE("a prefetched debug file names the expected addresses, and addresses past their units, as one read whole") {
  if (!llvm::sys::fs::exists(test::libcPath) || !llvm::sys::fs::exists(test::libcDebugPath)) {
    WARN("skipped: " << test::libcPath << " or its debug file is not unpacked");
    return;
  }
  std::shared_ptr<Module> module = test::moduleOf(test::libcPath, test::libcDebugPath);
  REQUIRE(module);
  REQUIRE(module->loadBias() == 0);
  Symbolizer prefetching(uint64_t(2) << 30, nullptr, /*readsVariables=*/false), plain;
  prefetching.prefetchDebugInfo(*module);
  prefetching.expect(*module, test::FutexWait);
  std::string named = describe(prefetching.symbolize(*module, test::FutexWait));
  CHECK(named.find("__futex_abstimed_wait_common64") != std::string::npos);
  CHECK(named == describe(plain.symbolize(*module, test::FutexWait)));
  CHECK(prefetching.prefetchedFiles() == 0);
  // Past the units the first name read (when .debug_info had not all arrived by then).
  CHECK(describe(prefetching.symbolize(*module, test::Clone3)) == describe(plain.symbolize(*module, test::Clone3)));
  CHECK(prefetching.dwarf(*module, test::Clone3) != nullptr);
  size_t differ = 0;
  for (uint64_t address = 0x28000; address < 0x180000; address += 0x1357)
    differ += describe(prefetching.symbolize(*module, address)) != describe(plain.symbolize(*module, address));
  CHECK(differ == 0);
}

TEST_CASE("nothing is prefetched for refused debug info, nor where a symbol cache gives the twins and names") {
  test::TempDir dir;
  Module module = compressedModule(dir);
  module.debugInfoRefused = true;
  Symbolizer symbolizer;
  symbolizer.prefetchDebugInfo(module);
  CHECK(symbolizer.prefetchedFiles() == 0);
  module.debugInfoRefused = false;
  SymbolMapCache maps(dir.file("cache"));
  Symbolizer cached(uint64_t(2) << 30, nullptr, true, &maps);
  cached.prefetchDebugInfo(module);
  CHECK(cached.prefetchedFiles() == 0);
  Symbolizer small(4); // the file claims more DWARF than that (8 bytes of .debug_str)
  small.prefetchDebugInfo(module);
  CHECK(small.prefetchedFiles() == 0);
  symbolizer.prefetchDebugInfo(module);
  CHECK(symbolizer.prefetchedFiles() == 1); // the same module, allowed
}
