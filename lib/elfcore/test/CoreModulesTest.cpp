#include "stackwalk/elfcore/CoreModules.h"

#include "llvm/BinaryFormat/ELF.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::elfcore;

namespace {

template <typename T> std::vector<uint8_t> bytesOf(const T &value) {
  std::vector<uint8_t> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  return bytes;
}

std::vector<uint8_t> words(std::initializer_list<uint64_t> values) {
  std::vector<uint8_t> bytes;
  for (uint64_t v : values) {
    std::vector<uint8_t> word = bytesOf(v);
    bytes.insert(bytes.end(), word.begin(), word.end());
  }
  return bytes;
}

constexpr uint64_t ExecutableBase = 0x400000, RDebug = 0x500000, LinkMap = 0x600000, Names = 0x700000;
// AT_PHDR of the process linkMapProcess() makes; its count unknown (read until PT_NULL).
const ExecutableProgramHeaders ProgramHeaders{.address = ExecutableBase + 0x40, .count = std::nullopt};

// A process whose executable's DT_DEBUG leads to a link map of two libraries,
// the second one's l_next pointing at `secondNext`.
BufferMemory linkMapProcess(uint64_t secondNext) {
  using namespace llvm::ELF;
  BufferMemory memory;
  Elf64_Phdr phdr{}, load{}, dynamic{}, end{};
  phdr.p_type = PT_PHDR;
  phdr.p_vaddr = 0x40;
  load.p_type = PT_LOAD;
  dynamic.p_type = PT_DYNAMIC;
  dynamic.p_vaddr = 0x1000;
  dynamic.p_memsz = 32;
  std::vector<uint8_t> headers;
  for (const Elf64_Phdr &p : {phdr, load, dynamic, end}) {
    std::vector<uint8_t> b = bytesOf(p);
    headers.insert(headers.end(), b.begin(), b.end());
  }
  memory.add(ProgramHeaders.address, headers);
  memory.add(ExecutableBase + 0x1000, words({DT_DEBUG, RDebug, DT_NULL, 0}));
  memory.add(RDebug, words({1, LinkMap}));
  // link_map: l_addr, l_name, l_ld, l_next, l_prev
  memory.add(LinkMap, words({0x7000000, Names, 0, LinkMap + 0x100, 0}));
  memory.add(LinkMap + 0x100, words({0x8000000, Names + 0x10, 0, secondNext, LinkMap}));
  std::vector<uint8_t> names(0x20, 0);
  std::memcpy(names.data(), "/lib/a.so", 9);
  std::memcpy(names.data() + 0x10, "/lib/b.so", 9);
  memory.add(Names, names);
  return memory;
}

} // namespace

TEST_CASE("the link map gives the modules when NT_FILE is missing") {
  std::vector<std::string> warnings;
  std::vector<Module> modules = modulesFromLinkMap(ProgramHeaders, "/bin/app", linkMapProcess(0), warnings);
  REQUIRE(modules.size() == 3);
  CHECK(modules[0].recordedPath == "/bin/app");
  CHECK(modules[0].base == ExecutableBase);
  CHECK(modules[1].recordedPath == "/lib/a.so");
  CHECK(modules[1].base == 0x7000000);
  CHECK(modules[2].recordedPath == "/lib/b.so");
  CHECK(warnings.empty());
}

TEST_CASE("a link map that loops back ends with a warning, keeping the entries before the loop") {
  std::vector<std::string> warnings;
  std::vector<Module> modules = modulesFromLinkMap(ProgramHeaders, "/bin/app", linkMapProcess(LinkMap), warnings);
  CHECK(modules.size() == 3);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "the link map loops or is too long; its remaining entries are ignored");
}

TEST_CASE("a link map entry in unreadable memory ends the list with a warning") {
  std::vector<std::string> warnings;
  std::vector<Module> modules = modulesFromLinkMap(ProgramHeaders, "/bin/app", linkMapProcess(0x9990000), warnings);
  CHECK(modules.size() == 3);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "a link map entry is unreadable; the module list is incomplete");
}

TEST_CASE("a vDSO the dump does not hold is no module, and says why") {
  BufferMemory empty;
  auto vdso = vdsoModule(0x7fff0000, 0x7fff2000, empty);
  REQUIRE_FALSE(bool(vdso));
  CHECK(llvm::toString(vdso.takeError()).starts_with("the vDSO at 0x7fff0000 is not copied from the dump: "));
  auto unmapped = vdsoModule(0x7fff0000, 0x7fff0000, empty);
  REQUIRE_FALSE(bool(unmapped));
  CHECK(llvm::toString(unmapped.takeError()) == "the vDSO at 0x7fff0000 has no mapping");
}

// node maps part of its executable again, far above (its text remapped into
// huge pages), with its JIT's anonymous code between, which NT_FILE leaves out:
// the executable's module ends where its program headers say, and no JIT frame
// is named after the executable's last symbol.
TEST_CASE("NT_FILE: a module's mappings end at its PT_LOAD extent, not at a far mapping of the same file") {
  using namespace llvm::ELF;
  BufferMemory memory;
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ElfMagic, 4);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_type = ET_EXEC;
  header.e_machine = EM_X86_64;
  header.e_phoff = sizeof header;
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 2;
  Elf64_Phdr text{}, data{};
  text.p_type = data.p_type = PT_LOAD;
  text.p_memsz = 0x3000;
  data.p_vaddr = 0x3000;
  data.p_offset = 0x3000;
  data.p_memsz = 0x1800;
  std::vector<uint8_t> headers = bytesOf(header);
  for (const Elf64_Phdr &p : {text, data}) {
    std::vector<uint8_t> b = bytesOf(p);
    headers.insert(headers.end(), b.begin(), b.end());
  }
  memory.add(ExecutableBase, headers);
  std::vector<FileMapping> mappings = {{ExecutableBase, ExecutableBase + 0x3000, 0, "/usr/bin/node"},
                                       {ExecutableBase + 0x3000, ExecutableBase + 0x5000, 0x3000, "/usr/bin/node"},
                                       {0x7f0000000000, 0x7f0000002000, 0x1000, "/usr/bin/node"}};
  std::vector<Module> modules = modulesFromFileNote(mappings, memory);
  REQUIRE(modules.size() == 1);
  CHECK(modules[0].base == ExecutableBase);
  CHECK(modules[0].size == 0x5000);
  SECTION("a file deleted since it was mapped (the kernel's ' (deleted)'): named without the mark") {
    for (FileMapping &mapping : mappings) mapping.path += " (deleted)";
    modules = modulesFromFileNote(mappings, memory);
    REQUIRE(modules.size() == 1);
    CHECK(modules[0].name == "node");
    CHECK(modules[0].recordedPath == "/usr/bin/node (deleted)");
  }
  SECTION("without program headers in the dump, the run of the file's mappings, as before") {
    BufferMemory headerless;
    modules = modulesFromFileNote(mappings, headerless);
    REQUIRE(modules.size() == 1);
    CHECK(modules[0].size == 0x7f0000002000 - ExecutableBase);
  }
}
