// LoadedElf on synthetic images laid out as a loader maps them: a dynamic
// section whose table addresses are relative (as in the file) or already
// relocated (as glibc leaves them), GNU and System V hash tables.
#include "stackwalk/core/LoadedElf.h"

#include "llvm/BinaryFormat/ELF.h"

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>

using namespace stackwalk;
using namespace llvm::ELF;

namespace {

constexpr uint64_t Base = 0x7f0000000000, Base32 = 0x40000000;
// File virtual addresses of the image's parts.
constexpr uint64_t Dynamic = 0x200, SymTab = 0x400, StrTab = 0x500, GnuHash = 0x600, SysvHash = 0x700;

uint32_t gnuHash(const char *name) {
  uint32_t h = 5381;
  for (; *name; ++name) h = h * 33 + uint8_t(*name);
  return h;
}

// A symbol as either class lays it out.
struct Symbol {
  uint32_t name;
  uint8_t info;
  uint16_t shndx;
  uint64_t value, size;
};

struct Image {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(0x1000, 0);
  bool is64;
  uint64_t base;
  template <typename T> void put(uint64_t at, T value) { std::memcpy(bytes.data() + at, &value, sizeof value); }
  // A word of the image's class.
  void word(uint64_t at, uint64_t value) { is64 ? put(at, value) : put(at, uint32_t(value)); }
  unsigned wordSize() const { return is64 ? 8 : 4; }

  // The ELF header, then the program headers: a PT_LOAD of the image and its PT_DYNAMIC.
  template <class Ehdr, class Phdr> void headers(unsigned char elfClass, uint16_t machine, Phdr load, Phdr dynamic) {
    Ehdr header{};
    std::memcpy(header.e_ident, ElfMagic, 4);
    header.e_ident[EI_CLASS] = elfClass;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_machine = machine;
    header.e_phoff = sizeof(Ehdr);
    header.e_phentsize = sizeof(Phdr);
    header.e_phnum = 2;
    put(0, header);
    put(sizeof(Ehdr), load);
    put(sizeof(Ehdr) + sizeof(Phdr), dynamic);
  }
  void headers(uint16_t machine) {
    if (is64)
      headers<Elf64_Ehdr>(ELFCLASS64, machine, Elf64_Phdr{PT_LOAD, PF_R | PF_X, 0, 0, 0, 0x1000, 0x1000, 0x1000},
                          Elf64_Phdr{PT_DYNAMIC, PF_R, Dynamic, Dynamic, Dynamic, 0x100, 0x100, 8});
    else
      headers<Elf32_Ehdr>(ELFCLASS32, machine, Elf32_Phdr{PT_LOAD, 0, 0, 0, 0x1000, 0x1000, PF_R | PF_X, 0x1000},
                          Elf32_Phdr{PT_DYNAMIC, Dynamic, Dynamic, Dynamic, 0x100, 0x100, PF_R, 4});
  }

  void symbol(unsigned index, Symbol s) {
    if (is64) put(SymTab + 24 * index, Elf64_Sym{s.name, s.info, 0, s.shndx, s.value, s.size});
    else put(SymTab + 16 * index, Elf32_Sym{s.name, uint32_t(s.value), uint32_t(s.size), s.info, 0, s.shndx});
  }

  // Symbols: 0 null, 1 "other" (no type), 2 "wanted" (a function at 0x123), 3 "missing" (undefined).
  // A 32-bit image is i386's unless `machine` says otherwise.
  Image(bool relocated, bool gnu, bool is64 = true, uint16_t machine = EM_386)
      : is64(is64), base(is64 ? Base : Base32) {
    headers(is64 ? uint16_t(EM_X86_64) : machine);
    uint64_t adjust = relocated ? base : 0;
    std::vector<std::pair<int64_t, uint64_t>> entries = {{DT_SYMTAB, SymTab + adjust}, {DT_STRTAB, StrTab + adjust},
                                                         {gnu ? DT_GNU_HASH : DT_HASH, (gnu ? GnuHash : SysvHash) + adjust},
                                                         {DT_NULL, 0}};
    for (size_t i = 0; i < entries.size(); ++i) {
      word(Dynamic + i * 2 * wordSize(), uint64_t(entries[i].first));
      word(Dynamic + i * 2 * wordSize() + wordSize(), entries[i].second);
    }
    const char strings[] = "\0other\0wanted\0missing";
    std::memcpy(bytes.data() + StrTab, strings, sizeof strings);
    symbol(1, {1, 0, 1, 0x100, 8});
    symbol(2, {7, (STB_GLOBAL << 4) | STT_FUNC, 1, 0x123, 8});
    symbol(3, {14, 0, SHN_UNDEF, 0, 0});
    // GNU: one bucket holding symbols 1-3 (symoffset 1), one bloom word (of the class's size).
    put(GnuHash, std::array<uint32_t, 4>{1, 1, 1, 6});
    word(GnuHash + 16, ~uint64_t(0));
    put(GnuHash + 16 + wordSize(), uint32_t(1));
    put(GnuHash + 20 + wordSize(),
        std::array<uint32_t, 3>{gnuHash("other") & ~1u, gnuHash("wanted") & ~1u, gnuHash("missing") | 1});
    // System V: one bucket whose chain is 3 -> 2 -> 1.
    put(SysvHash, std::array<uint32_t, 2>{1, 4});
    put(SysvHash + 8, uint32_t(3));
    put(SysvHash + 12, std::array<uint32_t, 4>{0, 0, 1, 2});
  }
  std::vector<LoadedElf::Function> functions() {
    BufferMemory memory;
    memory.add(base, bytes);
    auto elf = LoadedElf::read(memory, base);
    REQUIRE(bool(elf));
    CHECK(elf->is64() == is64);
    uint64_t budget = 100;
    std::vector<LoadedElf::Function> found = elf->functions(budget);
    CHECK(budget == 100 - 3); // the three symbols after the null one
    uint64_t none = 0;
    CHECK(elf->functions(none).empty());
    return found;
  }
  llvm::Expected<uint64_t> lookup(const char *name) {
    BufferMemory memory;
    memory.add(base, bytes);
    auto elf = LoadedElf::read(memory, base);
    if (!elf) return elf.takeError();
    CHECK(elf->bias() == base);
    return elf->symbolAddress(name);
  }
};

std::string error(llvm::Expected<uint64_t> result) {
  return result ? "" : llvm::toString(result.takeError());
}

} // namespace

TEST_CASE("a dynamic symbol of a loaded image, through either hash table and either kind of dynamic entry, "
          "in either class") {
  bool is64 = GENERATE(true, false), gnu = GENERATE(true, false), relocated = GENERATE(true, false);
  CAPTURE(is64, gnu, relocated);
  Image image(relocated, gnu, is64);
  auto wanted = image.lookup("wanted");
  REQUIRE(bool(wanted));
  CHECK(*wanted == image.base + 0x123);
  auto other = image.lookup("other");
  REQUIRE(bool(other));
  CHECK(*other == image.base + 0x100);
  CHECK(error(image.lookup("missing")) == "its dynamic symbols in the dump do not define missing"); // undefined
  CHECK(error(image.lookup("absent")) == "its dynamic symbols in the dump do not define absent");
}

TEST_CASE("a loaded image's functions: its defined dynamic symbols of type function, counted by either hash table, "
          "in either class") {
  bool is64 = GENERATE(true, false), gnu = GENERATE(true, false);
  CAPTURE(is64, gnu);
  Image image(true, gnu, is64);
  std::vector<LoadedElf::Function> functions = image.functions();
  REQUIRE(functions.size() == 1);
  CHECK(functions[0].name == "wanted");
  CHECK(functions[0].start == image.base + 0x123);
  CHECK(functions[0].size == 8);
}

TEST_CASE("an ARM image's function symbol: bit 0 says Thumb, and is not part of its address") {
  Image image(true, true, false, EM_ARM);
  std::vector<LoadedElf::Function> functions = image.functions();
  REQUIRE(functions.size() == 1);
  CHECK(functions[0].start == Base32 + 0x122);
}

TEST_CASE("a loaded image that cannot be read says why") {
  Image image(true, true);
  image.bytes[0] = 0;
  CHECK(error(image.lookup("wanted")).find("not a little-endian ELF header") != std::string::npos);
  Image noClass(true, true);
  noClass.bytes[EI_CLASS] = ELFCLASSNONE;
  CHECK(error(noClass.lookup("wanted")).find("of no class stackwalk reads") != std::string::npos);
  BufferMemory empty;
  auto none = LoadedElf::read(empty, Base);
  REQUIRE(!none);
  CHECK(llvm::toString(none.takeError()) == "its ELF header at 0x7f0000000000 is not in the dump");
  Image noHeaders(true, true); // no program header at all (fuzz_module_image: a zero-length read)
  noHeaders.put(offsetof(Elf64_Ehdr, e_phnum), uint16_t(0));
  CHECK(error(noHeaders.lookup("wanted")) == "it has no PT_LOAD segment");
  Image noDynamic(true, true);
  noDynamic.put(0x40 + sizeof(Elf64_Phdr), Elf64_Phdr{PT_NOTE, PF_R, 0, 0, 0, 0, 0, 4});
  CHECK(error(noDynamic.lookup("wanted")) == "it has no dynamic section (PT_DYNAMIC)");
  Image loop(true, false); // a System V chain that points at itself ends
  loop.put(SysvHash + 12 + 4 * 3, uint32_t(3));
  CHECK(error(loop.lookup("wanted")) == "its dynamic symbols in the dump do not define wanted");
}
