#include "stackwalk/core/Module.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Symbolizer.h"

#include "ElfFromYaml.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/COFF.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace stackwalk;

namespace {
// This test program's own file: a real ELF image to take apart.
std::vector<uint8_t> ownExecutable() {
  std::ifstream file("/proc/self/exe", std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}
} // namespace

TEST_CASE("an ELF image: segments, build-id, symbol tables") {
  auto image = ModuleImage::fromBytes(ownExecutable(), "self");
  REQUIRE(bool(image));
  CHECK((*image)->isElf());
  CHECK_FALSE((*image)->segments().empty());
  CHECK((*image)->symbolTablesUsable());
  CHECK(bool((*image)->section(".eh_frame")));
}

TEST_CASE("Breakpad's identifier of an ELF file: its build-id's first 16 bytes, else .text's first page folded") {
  std::vector<uint8_t> bytes = ownExecutable();
  auto image = ModuleImage::fromBytes(bytes, "self");
  REQUIRE(bool(image));
  const std::vector<uint8_t> &buildId = (*image)->buildId();
  REQUIRE(buildId.size() >= 16);
  auto id = (*image)->breakpadFileId();
  REQUIRE(id);
  CHECK(std::equal(id->begin(), id->end(), buildId.begin()));

  // The same file with its build-id note renamed (type 3 -> 0x7f): .text decides.
  auto note = std::search(bytes.begin(), bytes.end(), buildId.begin(), buildId.end());
  REQUIRE(note != bytes.end());
  uint32_t renamed = 0x7f;
  std::memcpy(&*(note - 8), &renamed, 4); // the note's type, before its "GNU\0" name
  auto stripped = ModuleImage::fromBytes(bytes, "no-build-id");
  REQUIRE(bool(stripped));
  CHECK((*stripped)->buildId().empty());
  auto text = (*stripped)->section(".text");
  REQUIRE(text);
  std::array<uint8_t, 16> folded{};
  for (size_t i = 0; i < std::min<size_t>(text->data.size(), 4096); ++i) folded[i % 16] ^= uint8_t(text->data[i]);
  CHECK((*stripped)->breakpadFileId() == folded);
}

TEST_CASE("an ELF file's symbols at an address are compared by name") {
  // This test program's own symbol table: main, and its Catch2 runner's entry.
  auto image = ModuleImage::fromBytes(ownExecutable(), "core_tests");
  REQUIRE(bool(image));
  auto main = (*image)->symbolAddress("main");
  REQUIRE(main);
  CHECK((*image)->hasSymbolAt("main", *main));
  CHECK_FALSE((*image)->hasSymbolAt("main", *main + 1));
  CHECK_FALSE((*image)->hasSymbolAt("mai", *main));
  CHECK_FALSE((*image)->hasSymbolAt("main2", *main));
  CHECK_FALSE((*image)->hasSymbolAt("", *main));
}

TEST_CASE("a malformed symbol table is kept from LLVM, which would abort (found by fuzz_module_image)") {
  std::vector<uint8_t> bytes = ownExecutable();
  llvm::ELF::Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  for (unsigned i = 0; i < header.e_shnum; ++i) {
    llvm::ELF::Elf64_Shdr section;
    size_t at = header.e_shoff + i * sizeof section;
    std::memcpy(&section, &bytes[at], sizeof section);
    if (section.sh_type == llvm::ELF::SHT_DYNSYM || section.sh_type == llvm::ELF::SHT_SYMTAB) {
      section.sh_entsize = 7;
      std::memcpy(&bytes[at], &section, sizeof section);
    }
  }
  auto image = ModuleImage::fromBytes(std::move(bytes), "broken");
  REQUIRE(bool(image));
  CHECK_FALSE((*image)->symbolTablesUsable());
  // Its frames are not named, and the symbolizer says why.
  Module module;
  module.name = "broken";
  module.base = 0x7f0000000000;
  module.size = 1 << 30;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer(/*maxDebugBytes=*/0);
  CHECK(symbolizer.symbolize(module, module.base + 0x1000).empty());
  CHECK(symbolizer.unusableSymbols(*module.image) == "its symbol tables are malformed (entry size, link or bounds)");
}

TEST_CASE("PDB debug ids as symbol stores spell them") {
  const uint8_t guid[16] = {0xa6, 0xf1, 0x8e, 0x71, 0x28, 0x20, 0xfb, 0xa0, 0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2e};
  CHECK(pdbDebugId(std::span<const uint8_t, 16>(guid, 16), 1) == "718EF1A62028A0FB4C4C44205044422E1");
  CHECK(hexString(std::vector<uint8_t>{0x0a, 0xff}) == "0aff");
}

TEST_CASE("a compressed section without a name counts toward the debug bytes (found by fuzz_module_image)") {
  // LLVM's DWARFContext decompresses every compressed section; one claiming
  // 2^62 bytes must be refused before LLVM allocates them.
  std::vector<uint8_t> bytes = ownExecutable();
  llvm::ELF::Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof header);
  bool patched = false;
  for (unsigned i = 1; i < header.e_shnum && !patched; ++i) {
    llvm::ELF::Elf64_Shdr section;
    size_t at = header.e_shoff + i * sizeof section;
    std::memcpy(&section, &bytes[at], sizeof section);
    if (section.sh_type != llvm::ELF::SHT_PROGBITS || (section.sh_flags & llvm::ELF::SHF_ALLOC) ||
        section.sh_size < sizeof(llvm::ELF::Elf64_Chdr))
      continue;
    llvm::ELF::Elf64_Chdr chdr{llvm::ELF::ELFCOMPRESS_ZLIB, 0, uint64_t(1) << 62, 1};
    std::memcpy(&bytes[section.sh_offset], &chdr, sizeof chdr);
    section.sh_flags |= llvm::ELF::SHF_COMPRESSED;
    section.sh_name = 0xfffffff0; // past the section name table
    std::memcpy(&bytes[at], &section, sizeof section);
    patched = true;
  }
  REQUIRE(patched);
  auto image = ModuleImage::fromBytes(std::move(bytes), "compressed");
  REQUIRE(bool(image));
  CHECK((*image)->debugInfoBytes() >= uint64_t(1) << 62);
  Module module;
  module.name = "compressed";
  module.size = 1 << 20;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer;
  for (const LoadSegment &segment : module.image->segments())
    if (segment.executable) (void)symbolizer.symbolize(module, segment.vaddr + 0x10);
}

namespace {
std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}
} // namespace

namespace {
// A relocatable object (a JIT's, as gdb's JIT interface registers them) with
// a relocation section for its .debug_info, as LLVM's DWARFContext applies it.
std::string relocatableObject(const std::string &relocationSection) {
  return R"(
--- !ELF
FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_REL, Machine: EM_X86_64}
Sections:
  - {Name: .text, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_EXECINSTR], Content: "c3"}
  - {Name: .debug_info, Type: SHT_PROGBITS, Content: "0000000000000000"}
)" + relocationSection + R"(
Symbols:
  - {Name: f, Type: STT_FUNC, Section: .text, Binding: STB_GLOBAL}
)";
}

bool debugRelocationsUsable(const std::string &relocationSection) {
  auto image = ModuleImage::fromFileBuffer(test::elfFromYaml(relocatableObject(relocationSection)), "object");
  REQUIRE(bool(image));
  return (*image)->debugRelocationsUsable();
}
} // namespace

TEST_CASE("a relocatable object's malformed relocation sections are kept from LLVM's DWARF reader, which would abort "
          "(found by fuzz_module_image)") {
  CHECK(debugRelocationsUsable(R"(
  - {Name: .rela.debug_info, Type: SHT_RELA, Link: .symtab, Info: .debug_info,
     Relocations: [{Offset: 0, Type: R_X86_64_64, Symbol: f}]})"));
  CHECK_FALSE(debugRelocationsUsable(R"(
  - {Name: .rela.debug_info, Type: SHT_RELA, Link: 0x4444, Info: .debug_info,
     Relocations: [{Offset: 0, Type: R_X86_64_64, Symbol: f}]})"));   // no section at its link
  CHECK_FALSE(debugRelocationsUsable(R"(
  - {Name: .rela.debug_info, Type: SHT_RELA, Link: .symtab, Info: .debug_info, EntSize: 0,
     Relocations: [{Offset: 0, Type: R_X86_64_64, Symbol: f}]})"));   // LLVM divides by it
  CHECK_FALSE(debugRelocationsUsable(R"(
  - {Name: .rela.debug_info, Type: SHT_RELA, Link: .symtab, Info: .debug_info,
     Relocations: [{Offset: 0, Type: R_X86_64_64, Symbol: 0x99}]})")); // past the symbol table
  CHECK_FALSE(debugRelocationsUsable(R"(
  - {Name: .crel.debug_info, Type: SHT_CREL, Link: .symtab, Info: .debug_info, Content: "00"})"));

  // The fuzzer's file: a RELA section linked to section 4144 of 21. Its
  // frames are named without DWARF, and the walk goes on.
  auto image = ModuleImage::fromBytes(fileBytes(STACKWALK_FINDINGS_DIR "/llvm19-elf-relocation-link-past-sections"),
                                      "finding");
  REQUIRE(bool(image));
  CHECK_FALSE((*image)->debugRelocationsUsable());
  Module module;
  module.name = "finding";
  module.base = 0x10000;
  module.size = 0x10000;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer(/*maxDebugBytes=*/UINT64_MAX);
  (void)symbolizer.symbolize(module, module.base + 0x10);
}

TEST_CASE("a DLL's exports are found by name at ImageBase + RVA") {
  auto image = ModuleImage::fromBytes(fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll"), "exports.dll");
  REQUIRE(bool(image));
  uint64_t base = (*image)->preferredBase();
  CHECK(base == 0x2D0B90000); // llvm-readobj-19 --file-headers, --coff-exports
  CHECK((*image)->symbolAddress("DotNetRuntimeContractDescriptor") == base + 0x3010);
  CHECK((*image)->symbolAddress("stackwalk_exported_function") == base + 0x1370);
  CHECK_FALSE((*image)->symbolAddress("not_exported"));
}

TEST_CASE("export tables that run past the file are kept from LLVM (found by fuzz_module_image)") {
  // Its export directory (RVA 0x40, inside the headers) names tables 1.9-3.3 GB into a
  // 52 KB file; LLVM 19's getSymbolName read them.
  auto image = ModuleImage::fromBytes(fileBytes(STACKWALK_FINDINGS_DIR "/llvm19-coff-export-name-past-file"), "finding");
  REQUIRE(bool(image));
  CHECK_FALSE((*image)->symbolTablesUsable());
  CHECK_FALSE((*image)->symbolAddress("anything"));
}

TEST_CASE("a PE image the loader mapped is rebuilt from memory, exports and all") {
  std::vector<uint8_t> file = fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll");
  auto parsed = ModuleImage::fromBytes(file, "exports.dll");
  REQUIRE(bool(parsed));
  // Lay the file out as the loader does: headers at the base, each section at its RVA.
  constexpr uint64_t Base = 0x7ff600000000;
  BufferMemory memory;
  auto coff = llvm::cast<llvm::object::COFFObjectFile>(&(*parsed)->object());
  memory.add(Base, std::vector<uint8_t>(file.begin(), file.begin() + coff->getPE32PlusHeader()->SizeOfHeaders));
  for (const llvm::object::SectionRef &ref : coff->sections()) {
    const llvm::object::coff_section *section = coff->getCOFFSection(ref);
    std::vector<uint8_t> mapped(std::max(section->VirtualSize, section->SizeOfRawData), 0);
    std::copy_n(file.begin() + section->PointerToRawData, section->SizeOfRawData, mapped.begin());
    memory.add(Base + section->VirtualAddress, mapped);
  }
  auto image = ModuleImage::fromLoadedPe(memory, Base, "exports.dll");
  REQUIRE(bool(image));
  uint64_t preferred = (*image)->preferredBase();
  CHECK((*image)->symbolAddress("DotNetRuntimeContractDescriptor") == preferred + 0x3010);
  CHECK((*image)->symbolAddress("stackwalk_exported_function") == preferred + 0x1370);
  CHECK(bool(ModuleImage::fromLoadedPe(memory, Base + 0x1000, "x")) == false); // no MZ there
}

TEST_CASE("a loaded PE image with a section missing from the dump is not rebuilt") {
  std::vector<uint8_t> file = fileBytes(STACKWALK_CORE_TEST_DATA "/exports.dll");
  BufferMemory memory;
  memory.add(0x10000, std::vector<uint8_t>(file.begin(), file.begin() + 0x400)); // headers only
  auto image = ModuleImage::fromLoadedPe(memory, 0x10000, "exports.dll");
  REQUIRE_FALSE(bool(image));
  CHECK(llvm::toString(image.takeError()) == "a section of the image is not in the dump's memory");
}
