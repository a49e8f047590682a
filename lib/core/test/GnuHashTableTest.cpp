#include "GnuHashTable.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/ObjectYAML/yaml2obj.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

using namespace llvm;
using namespace llvm::object;
using namespace stackwalk;

namespace {

// A file's .dynsym with its GNU hash table, as the tests read them.
struct DynamicSymbols {
  explicit DynamicSymbols(MemoryBufferRef bytes) : elf(cantFail(ELFFile<ELF64LE>::create(bytes.getBuffer()))) {
    sections = cantFail(elf.sections());
    for (const ELF64LE::Shdr &section : sections)
      if (section.sh_type == ELF::SHT_DYNSYM) dynsym = &section;
    REQUIRE(dynsym);
    symbols = cantFail(elf.symbols(dynsym));
    strings = cantFail(elf.getStringTableForSymtab(*dynsym, sections));
  }
  std::optional<GnuHashTable> table() const {
    return GnuHashTable::forSymbols(elf, sections, *dynsym, symbols.size());
  }
  std::optional<uint32_t> find(const GnuHashTable &table, StringRef name) const {
    return table.find(name, [&](uint32_t index) {
      return symbols[index].st_shndx != ELF::SHN_UNDEF && cantFail(symbols[index].getName(strings)) == name;
    });
  }
  ELFFile<ELF64LE> elf;
  ArrayRef<ELF64LE::Shdr> sections;
  const ELF64LE::Shdr *dynsym = nullptr;
  ArrayRef<ELF64LE::Sym> symbols;
  StringRef strings;
};

// Two dynamic symbols, an import (undefined, not hashed) and `present`, and a
// hash table whose fields the test sets (@SYMNDX@ and the others).
const char *const kHashedYaml = R"(
--- !ELF
FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_DYN, Machine: EM_X86_64}
Sections:
  - {Name: .text, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_EXECINSTR], Address: 0x1000, Size: 0x100}
  - Name: .gnu.hash
    Type: SHT_GNU_HASH
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Header: {SymNdx: @SYMNDX@, Shift2: @SHIFT2@, NBuckets: @NBUCKETS@, MaskWords: @MASKWORDS@}
    BloomFilter: [@BLOOM@]
    HashBuckets: [@BUCKET@]
    HashValues: [@CHAIN@]
DynamicSymbols:
  - {Name: imported, Binding: STB_GLOBAL}
  - {Name: present, Type: STT_FUNC, Section: .text, Value: 0x1010, Binding: STB_GLOBAL}
)";

std::unique_ptr<MemoryBuffer> hashedFile(std::map<std::string, std::string> fields) {
  uint32_t hash = hashGnu("present");
  // The Bloom filter's word with the two bits the dynamic loader tests set.
  uint64_t bloom = (uint64_t(1) << (hash % 64)) | (uint64_t(1) << ((hash >> 6) % 64));
  std::map<std::string, std::string> values = {{"SYMNDX", "2"}, {"SHIFT2", "6"}, {"NBUCKETS", "1"}, {"MASKWORDS", "1"},
                                               {"BLOOM", std::to_string(bloom)}, {"BUCKET", "2"},
                                               {"CHAIN", std::to_string(hash | 1)}};
  for (auto &[key, value] : fields) values[key] = value;
  std::string yaml = kHashedYaml;
  for (const auto &[key, value] : values) yaml.replace(yaml.find("@" + key + "@"), key.size() + 2, value);
  std::string bytes;
  raw_string_ostream out(bytes);
  yaml::Input input(yaml);
  REQUIRE(yaml::convertYAML(input, out, [](const Twine &message) { FAIL(message.str()); }));
  return MemoryBuffer::getMemBufferCopy(bytes);
}

std::optional<uint64_t> symbolAddress(const MemoryBuffer &file, StringRef name) {
  auto image = ModuleImage::fromBytes({file.getBufferStart(), file.getBufferEnd()}, "hashed");
  REQUIRE(bool(image));
  return (*image)->symbolAddress(name);
}

} // namespace

TEST_CASE("the GNU hash table finds each defined dynamic symbol of libc where a scan of .dynsym does") {
  const char *path = "/lib/x86_64-linux-gnu/libc.so.6";
  if (!std::filesystem::exists(path)) {
    WARN("no x86-64 libc here: " << path);
    return;
  }
  auto file = MemoryBuffer::getFile(path);
  REQUIRE(bool(file));
  DynamicSymbols libc((*file)->getMemBufferRef());
  auto table = libc.table();
  REQUIRE(table);
  // The first defined symbol of each name, in table order (versions repeat names).
  std::map<std::string, uint32_t> first;
  for (uint32_t i = 0; i < libc.symbols.size(); ++i) {
    std::string name = cantFail(libc.symbols[i].getName(libc.strings)).str();
    if (!name.empty() && libc.symbols[i].st_shndx != ELF::SHN_UNDEF) first.try_emplace(name, i);
  }
  REQUIRE(first.size() > 1000);
  size_t differ = 0;
  for (const auto &[name, index] : first) differ += libc.find(*table, name) != index;
  CHECK(differ == 0);
  for (const char *absent : {"__jit_debug_descriptor", "_U_dyn_info_list", "mallocx", ""})
    CHECK_FALSE(libc.find(*table, absent));
}

TEST_CASE("a GNU hash table: defined symbols found, imports and other names not") {
  auto file = hashedFile({});
  DynamicSymbols hashed(file->getMemBufferRef());
  auto table = hashed.table();
  REQUIRE(table);
  CHECK(hashed.find(*table, "present") == 2u);
  CHECK_FALSE(hashed.find(*table, "imported"));
  CHECK_FALSE(hashed.find(*table, "absent"));
  CHECK(symbolAddress(*file, "present") == 0x1010u);
  CHECK_FALSE(symbolAddress(*file, "imported")); // an import has no address of its own
  CHECK_FALSE(symbolAddress(*file, "absent"));
}

TEST_CASE("a GNU hash table that does not fit its file or symbols is not used: the symbols are scanned") {
  for (auto fields : std::vector<std::map<std::string, std::string>>{
           {{"NBUCKETS", "0"}}, {{"SYMNDX", "5"}}, {{"MASKWORDS", "0x10000000"}}, {{"NBUCKETS", "0xffffffff"}}}) {
    INFO(fields.begin()->first << " " << fields.begin()->second);
    auto file = hashedFile(fields);
    DynamicSymbols hashed(file->getMemBufferRef());
    CHECK_FALSE(hashed.table());
    CHECK(symbolAddress(*file, "present") == 0x1010u);
    CHECK_FALSE(symbolAddress(*file, "imported"));
  }
}

TEST_CASE("a GNU hash table's chain that points past the symbols ends the lookup") {
  for (const char *bucket : {"3", "0x7fffffff", "1"}) { // past the 3 symbols; before SymNdx
    INFO(bucket);
    auto file = hashedFile({{"BUCKET", bucket}});
    DynamicSymbols hashed(file->getMemBufferRef());
    auto table = hashed.table();
    REQUIRE(table);
    CHECK_FALSE(hashed.find(*table, "present"));
  }
}

TEST_CASE("a GNU hash table's Bloom shift of 32 or more shifts every bit of the hash out") {
  auto file = hashedFile({{"SHIFT2", "40"}, {"BLOOM", "0xffffffffffffffff"}});
  DynamicSymbols hashed(file->getMemBufferRef());
  auto table = hashed.table();
  REQUIRE(table);
  CHECK(hashed.find(*table, "present") == 2u);
}
