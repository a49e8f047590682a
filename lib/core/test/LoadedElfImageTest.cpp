// ModuleImage::fromLoadedElf on a real ELF file, this test program itself,
// laid out in memory as the loader maps it (each PT_LOAD segment's file bytes
// at base + p_vaddr): the rebuilt file must have the file's segments, build-id,
// unwind tables and dynamic symbols, and must not be made from a partial image.
#include "ModuleFiles.h"

#include "stackwalk/core/LoadedElf.h"
#include "stackwalk/core/Module.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/Target.h"

#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

using namespace stackwalk;

namespace {

constexpr uint64_t Base = 0x7f1200000000, Base32 = 0x40000000;

// An ELF file laid out at `base` as the loader maps it.
struct Loaded {
  std::unique_ptr<ModuleImage> file;
  BufferMemory memory;
  std::vector<uint8_t> bytes;

  // Maps the file's segments; with cutCode, only the first half of its code.
  explicit Loaded(const std::string &path, bool cutCode = false, uint64_t base = Base) {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    auto opened = ModuleImage::open(path);
    REQUIRE(bool(opened));
    file = std::move(*opened);
    for (const LoadSegment &segment : file->segments()) {
      uint64_t mapped = cutCode && segment.executable ? segment.fileSize / 2 : segment.fileSize;
      memory.add(base + segment.vaddr - file->preferredBase(),
                 std::vector<uint8_t>(bytes.begin() + segment.fileOffset, bytes.begin() + segment.fileOffset + mapped));
    }
  }
};

// This test program itself.
struct LoadedSelf : Loaded {
  explicit LoadedSelf(bool cutCode = false) : Loaded("/proc/self/exe", cutCode) {}
};

bool sameSegments(const std::vector<LoadSegment> &a, const std::vector<LoadSegment> &b) {
  auto key = [](const LoadSegment &s) { return std::tuple(s.vaddr, s.memSize, s.fileOffset, s.fileSize, s.executable); };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [&](auto &x, auto &y) { return key(x) == key(y); });
}

} // namespace

TEST_CASE("an ELF image rebuilt from memory has its file's segments, build-id and unwind tables") {
  LoadedSelf self;
  auto rebuilt = ModuleImage::fromLoadedElf(self.memory, Base, "core_tests");
  REQUIRE(bool(rebuilt));
  const ModuleImage &image = **rebuilt;
  CHECK(image.inMemory());
  CHECK(sameSegments(image.segments(), self.file->segments()));
  CHECK(image.preferredBase() == self.file->preferredBase());
  CHECK(!image.buildId().empty());
  CHECK(image.buildId() == self.file->buildId());
  auto hdr = image.section(".eh_frame_hdr"), fileHdr = self.file->section(".eh_frame_hdr");
  REQUIRE(hdr);
  REQUIRE(fileHdr);
  CHECK(hdr->address == fileHdr->address);
  CHECK(hdr->data == fileHdr->data);
  auto ehFrame = image.section(".eh_frame"), fileEhFrame = self.file->section(".eh_frame");
  REQUIRE(ehFrame);
  REQUIRE(fileEhFrame);
  CHECK(ehFrame->address == fileEhFrame->address);
  CHECK(ehFrame->data.starts_with(fileEhFrame->data)); // to its segment's end: nothing loaded records its size
}

namespace {

// A copy of the ELF file at `path` (of the class the three types give) with the
// program headers of the given types made PT_NULL (a statically linked
// executable has no PT_DYNAMIC, and without --eh-frame-hdr no PT_GNU_EH_FRAME
// either) and, with wipeEhFrame, its .eh_frame's bytes zeroed.
template <class Ehdr, class Phdr, class Shdr>
std::string copyWithout(const char *path, std::initializer_list<uint32_t> types, bool wipeEhFrame) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Phdr ph;
    char *at = bytes.data() + header.e_phoff + i * sizeof ph;
    std::memcpy(&ph, at, sizeof ph);
    if (std::find(types.begin(), types.end(), ph.p_type) != types.end()) ph.p_type = PT_NULL;
    std::memcpy(at, &ph, sizeof ph);
  }
  if (wipeEhFrame) {
    auto section = [&](unsigned i) {
      Shdr sh;
      std::memcpy(&sh, bytes.data() + header.e_shoff + i * sizeof sh, sizeof sh);
      return sh;
    };
    Shdr names = section(header.e_shstrndx);
    for (unsigned i = 0; i < header.e_shnum; ++i)
      if (Shdr sh = section(i); std::strcmp(bytes.data() + names.sh_offset + sh.sh_name, ".eh_frame") == 0)
        std::fill_n(bytes.begin() + sh.sh_offset, sh.sh_size, 0);
  }
  llvm::SmallString<128> copy;
  REQUIRE(!llvm::sys::fs::createTemporaryFile("static", "", copy));
  std::ofstream(std::string(copy), std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return std::string(copy);
}

// This test program itself, so altered.
std::string selfWithout(std::initializer_list<uint32_t> types, bool wipeEhFrame = false) {
  return copyWithout<Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr>("/proc/self/exe", types, wipeEhFrame);
}

} // namespace

TEST_CASE("a static executable is rebuilt from memory for its unwind tables, located by its headers or found") {
  std::string noDynamic = selfWithout({PT_DYNAMIC});
  Loaded staticExe(noDynamic);
  auto rebuilt = ModuleImage::fromLoadedElf(staticExe.memory, Base, "static");
  REQUIRE(bool(rebuilt));
  CHECK((*rebuilt)->section(".eh_frame"));
  CHECK_FALSE((*rebuilt)->section(".dynsym"));
  auto elf = LoadedElf::read(staticExe.memory, Base);
  REQUIRE(bool(elf));
  CHECK(llvm::toString(elf->symbolAddress("main").takeError()) == "it has no dynamic section (PT_DYNAMIC)");

  // Without --eh-frame-hdr: the .eh_frame found by searching the read-only segments, whole.
  std::string noHeader = selfWithout({PT_DYNAMIC, PT_GNU_EH_FRAME});
  Loaded plainStatic(noHeader);
  auto found = ModuleImage::fromLoadedElf(plainStatic.memory, Base, "static");
  REQUIRE(bool(found));
  auto ehFrame = (*found)->section(".eh_frame"), fileEhFrame = plainStatic.file->section(".eh_frame");
  REQUIRE(ehFrame);
  REQUIRE(fileEhFrame);
  CHECK(ehFrame->address == fileEhFrame->address);
  CHECK(ehFrame->data == fileEhFrame->data);

  std::string noTables = selfWithout({PT_DYNAMIC, PT_GNU_EH_FRAME}, /*wipeEhFrame=*/true);
  Loaded bare(noTables);
  auto refused = ModuleImage::fromLoadedElf(bare.memory, Base, "static");
  REQUIRE_FALSE(bool(refused));
  CHECK(llvm::toString(refused.takeError()).starts_with("it has neither a dynamic section"));
  for (const std::string &path : {noDynamic, noHeader, noTables}) std::remove(path.c_str());
}

// i386's libc (libc6:i386, which the i386 tests install) without PT_GNU_EH_FRAME:
// the search reads an ELF32 image's 4-byte pointers.
TEST_CASE("a 32-bit image's .eh_frame that no header locates is found") {
  const char *libc = "/usr/lib/i386-linux-gnu/libc.so.6";
  if (!std::ifstream(libc)) {
    WARN(std::string(libc) + " is not installed: not checked");
    return;
  }
  std::string noHeader = copyWithout<Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr>(libc, {PT_GNU_EH_FRAME}, false);
  Loaded loaded(noHeader, false, Base32);
  auto rebuilt = ModuleImage::fromLoadedElf(loaded.memory, Base32, "libc.so.6");
  REQUIRE(bool(rebuilt));
  CHECK_FALSE((*rebuilt)->section(".eh_frame_hdr"));
  auto ehFrame = (*rebuilt)->section(".eh_frame"), fileEhFrame = loaded.file->section(".eh_frame");
  REQUIRE(ehFrame);
  REQUIRE(fileEhFrame);
  CHECK(ehFrame->address == fileEhFrame->address);
  CHECK(ehFrame->data == fileEhFrame->data);
  std::remove(noHeader.c_str());
}

TEST_CASE("an ELF image rebuilt from memory names code by its dynamic symbols") {
  LoadedSelf self;
  auto rebuilt = ModuleImage::fromLoadedElf(self.memory, Base, "core_tests");
  REQUIRE(bool(rebuilt));
  auto elf = LoadedElf::read(self.memory, Base);
  REQUIRE(bool(elf));
  uint64_t budget = 1 << 20;
  std::vector<LoadedElf::Function> functions = elf->functions(budget);
  REQUIRE(functions.size() > 10);
  Module module;
  module.name = "core_tests";
  module.base = Base;
  module.size = 1 << 30;
  module.image = std::shared_ptr<ModuleImage>(std::move(*rebuilt));
  // Aliases (two names at one address, as a sanitizer's interceptors have) name each other's code.
  std::map<uint64_t, std::set<std::string>> namesAt;
  for (const LoadedElf::Function &function : functions) namesAt[function.start].insert(llvm::demangle(function.name));
  Symbolizer symbolizer;
  for (const LoadedElf::Function &function : functions) {
    CAPTURE(function.name);
    CHECK(module.image->symbolAddress(function.name) == function.start - Base);
    const std::vector<SourceFrame> &frames = symbolizer.symbolize(module, function.start);
    REQUIRE(frames.size() == 1);
    CHECK(namesAt[function.start].count(frames[0].function) == 1);
  }
}

// i386's and ARM's libc (libc6:i386, libc6-armhf-cross), which the 32-bit tests install:
// the rebuilt file is written in the image's class, with the unwind table each keeps.
TEST_CASE("a 32-bit ELF image rebuilt from memory: its segments, build-id, unwind table and dynamic symbols") {
  const auto [path, unwindTable] = GENERATE(std::pair("/usr/lib/i386-linux-gnu/libc.so.6", ".eh_frame_hdr"),
                                            std::pair("/usr/arm-linux-gnueabihf/lib/libc.so.6", ".ARM.exidx"));
  CAPTURE(path);
  if (!std::ifstream(path)) {
    WARN(std::string(path) + " is not installed: not checked");
    return;
  }
  Loaded libc(path, false, Base32);
  auto rebuilt = ModuleImage::fromLoadedElf(libc.memory, Base32, "libc.so.6");
  REQUIRE(bool(rebuilt));
  const ModuleImage &image = **rebuilt;
  CHECK(sameSegments(image.segments(), libc.file->segments()));
  CHECK(!image.buildId().empty());
  CHECK(image.buildId() == libc.file->buildId());
  auto table = image.section(unwindTable), fileTable = libc.file->section(unwindTable);
  REQUIRE(table);
  REQUIRE(fileTable);
  CHECK(table->address == fileTable->address);
  CHECK(table->data == fileTable->data);
  for (const char *name : {"abort", "pthread_create", "nanosleep"}) {
    CAPTURE(name);
    CHECK(image.symbolAddress(name));
    CHECK(image.symbolAddress(name) == libc.file->symbolAddress(name));
  }
}

TEST_CASE("an ELF image is not rebuilt from a partial copy, or past its budget") {
  LoadedSelf partial(/*cutCode=*/true);
  auto missing = ModuleImage::fromLoadedElf(partial.memory, Base, "core_tests");
  REQUIRE_FALSE(bool(missing));
  CHECK(llvm::toString(missing.takeError()) == "a segment of the image is not in the dump's memory");
  LoadedSelf self;
  auto over = ModuleImage::fromLoadedElf(self.memory, Base, "core_tests", 1 << 20);
  REQUIRE_FALSE(bool(over));
  CHECK(llvm::toString(over.takeError()).find("over the limit") != std::string::npos);
  CHECK_FALSE(bool(ModuleImage::fromLoadedElf(self.memory, Base + 0x1000, "x"))); // no ELF header there
}

TEST_CASE("the resolver rebuilds a module without a file from memory, or notes why not") {
  LoadedSelf self;
  Target target(Arch::X86_64, OS::Linux, "elf-core", std::make_unique<BufferMemory>(self.memory));
  Module module;
  module.name = "core_tests";
  module.recordedPath = "/nonexistent/core_tests";
  module.base = Base;
  module.size = 1 << 30;
  ModuleSearchOptions search;
  search.hostFiles = false;
  SECTION("its build-id is the dump's: rebuilt") {
    module.buildId = self.file->buildId();
    target.modules = {module};
    ModuleResolver(search).resolve(target);
    REQUIRE(target.modules[0].image);
    CHECK(target.modules[0].imageNote == "rebuilt from the dump's memory (no file found)");
  }
  SECTION("a file of another build-id under its name: rebuilt, and the note names the file refused") {
    if (!llvm::sys::fs::exists(test::libcPath)) {
      WARN("skipped: " << test::libcPath << " is not unpacked");
      return;
    }
    module.name = "libc.so.6";
    module.buildId = self.file->buildId();
    search.modulePaths = {llvm::sys::path::parent_path(test::libcPath).str()};
    target.modules = {module};
    ModuleResolver(search).resolve(target);
    REQUIRE(target.modules[0].image);
    CHECK(target.modules[0].imageNote.starts_with("rebuilt from the dump's memory (no matching file; rejected: " +
                                                  test::libcPath + " (build-id "));
  }
  SECTION("another build-id: not rebuilt, and the note says why") {
    module.buildId = {0xab, 0xcd};
    target.modules = {module};
    ModuleResolver(search).resolve(target);
    CHECK_FALSE(target.modules[0].image);
    CHECK(target.modules[0].imageNote.ends_with("not rebuilt from the dump's memory: the image there has build-id " +
                                                  hexString(self.file->buildId()) + ", the dump records abcd"));
  }
  SECTION("nothing of it in the dump: no note of the rebuild") {
    module.base = Base + (uint64_t(1) << 32);
    target.modules = {module};
    ModuleResolver(search).resolve(target);
    CHECK_FALSE(target.modules[0].image);
    CHECK(target.modules[0].imageNote.find("rebuilt") == std::string::npos);
  }
}

TEST_CASE("a module not rebuilt keeps the program headers' segments: its code and data told apart") {
  LoadedSelf partial(/*cutCode=*/true);
  Target target(Arch::X86_64, OS::Linux, "elf-core", std::make_unique<BufferMemory>(partial.memory));
  Module module;
  module.name = "core_tests";
  module.base = Base;
  module.size = 1 << 30;
  target.modules = {module};
  ModuleSearchOptions search;
  search.hostFiles = false;
  ModuleResolver(search).resolve(target);
  const Module &resolved = target.modules[0];
  REQUIRE_FALSE(resolved.image);
  REQUIRE(resolved.segmentsInDump.size() == partial.file->segments().size());
  uint64_t bias = Base - partial.file->preferredBase();
  for (const LoadSegment &segment : partial.file->segments()) {
    CHECK(target.isExecutable(bias + segment.vaddr) == segment.executable);
    CHECK(target.isExecutable(bias + segment.vaddr + segment.memSize - 1) == segment.executable);
  }
  const LoadSegment &last = partial.file->segments().back();
  CHECK_FALSE(target.isExecutable(bias + last.vaddr + last.memSize + 0x100000)); // in the module's extent, no segment's
  SECTION("without its headers in the dump, the module's extent counts as code") {
    Target bare(Arch::X86_64, OS::Linux, "elf-core", std::make_unique<BufferMemory>());
    bare.modules = {module};
    ModuleResolver(search).resolve(bare);
    CHECK(bare.modules[0].segmentsInDump.empty());
    CHECK(bare.isExecutable(Base + 0x100));
  }
}
