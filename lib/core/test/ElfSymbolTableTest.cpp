#include "stackwalk/core/ElfSymbolTable.h"

#include "ElfFromYaml.h"
#include "ElfSymbolizableModule.h"
#include "stackwalk/core/ModuleImage.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/Symbolize/SymbolizableObjectFile.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

using namespace llvm;
using namespace stackwalk;

namespace {

// Symbols for each rule LLVM's symbolizer has: files before their locals,
// three symbols at one address (a shorter one, then two of the largest
// size), a size-0 assembly label, symbols outside any section (absolute,
// undefined, a section index past the headers) or in one not loaded (a
// link-time warning, at an address of .text), types it leaves out (TLS),
// an indirect function, ARM's and AArch64's mapping symbols, a nameless
// label, a Thumb function (odd address), and labels at and before their
// sections' ends. MACHINE and CLASS are replaced.
const char *const kSymbolsYaml = R"(
--- !ELF
FileHeader: {Class: CLASS, Data: ELFDATA2LSB, Type: TYPE, Machine: MACHINE}
Sections:
  - {Name: .text, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_EXECINSTR], Address: 0x1000, Size: 0x200}
  - {Name: .data, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x3000, Size: 0x100}
  - {Name: .gnu.warning.gets, Type: SHT_PROGBITS, Size: 0x40}
Symbols:
  - {Name: a.c, Type: STT_FILE, Index: SHN_ABS}
  - {Name: helper, Type: STT_FUNC, Section: .text, Value: 0x1000, Size: 0x10}
  - {Name: table, Type: STT_OBJECT, Section: .text, Value: 0x1010, Size: 0x8}
  - {Name: '$t', Section: .text, Value: 0x1018}
  - {Name: b.c, Type: STT_FILE, Index: SHN_ABS}
  - {Name: static_b, Type: STT_FUNC, Section: .text, Value: 0x1090, Size: 0x4}
  - {Name: tls, Type: STT_TLS, Section: .text, Value: 0x1060, Size: 0x8}
  - {Name: '', Section: .text, Value: 0x1030}
  - {Name: '$d', Section: .text, Value: 0x1040}
  - {Name: '$x.1', Section: .text, Value: 0x1044}
  - {Name: counter, Type: STT_OBJECT, Section: .data, Value: 0x3010, Size: 0x8}
  - {Name: warning, Type: STT_OBJECT, Section: .gnu.warning.gets, Value: 0x1000, Size: 0x40}
  - {Name: short, Type: STT_FUNC, Section: .text, Value: 0x1020, Size: 0x8, Binding: STB_GLOBAL}
  - {Name: alias1, Type: STT_FUNC, Section: .text, Value: 0x1020, Size: 0x20, Binding: STB_GLOBAL}
  - {Name: alias2, Type: STT_FUNC, Section: .text, Value: 0x1020, Size: 0x20, Binding: STB_WEAK}
  - {Name: absolute, Type: STT_FUNC, Index: SHN_ABS, Value: 0x1070, Size: 0x8, Binding: STB_GLOBAL}
  - {Name: past_sections, Type: STT_FUNC, Index: 0x7f, Value: 0x10a0, Size: 0x8, Binding: STB_GLOBAL}
  - {Name: asm_entry, Section: .text, Value: 0x1050, Binding: STB_GLOBAL}
  - {Name: resolver, Type: STT_GNU_IFUNC, Section: .text, Value: 0x1080, Size: 0x8, Binding: STB_GLOBAL}
  - {Name: thumb_func, Type: STT_FUNC, Section: .text, Value: 0x1101, Size: 0x10, Binding: STB_GLOBAL}
  - {Name: elsewhere, Binding: STB_GLOBAL}
  - {Name: text_end, Section: .text, Value: 0x1200, Binding: STB_GLOBAL}
  - {Name: data_label, Section: .data, Value: 0x30f0, Binding: STB_GLOBAL}
)";

std::string replaced(std::string text, const std::vector<std::pair<std::string, std::string>> &changes) {
  for (const auto &[from, to] : changes) text.replace(text.find(from), from.size(), to);
  return text;
}

using test::elfFromYaml;

std::unique_ptr<MemoryBuffer> symbolsFile(const std::string &machine, const std::string &type = "ET_DYN") {
  bool wide = machine == "EM_X86_64" || machine == "EM_AARCH64";
  return elfFromYaml(replaced(kSymbolsYaml, {{"CLASS", wide ? "ELFCLASS64" : "ELFCLASS32"},
                                             {"TYPE", type},
                                             {"MACHINE", machine}}));
}

std::unique_ptr<object::ObjectFile> objectOf(const MemoryBuffer &buffer) {
  auto object = object::ObjectFile::createObjectFile(buffer.getMemBufferRef());
  REQUIRE(bool(object));
  return std::move(*object);
}

std::unique_ptr<DIContext> noDwarf() {
  return DWARFContext::create(StringMap<std::unique_ptr<MemoryBuffer>>(), 8, /*isLittleEndian=*/true);
}

// What a module says at an address when the symbol table names it.
std::string describe(const symbolize::SymbolizableModule &module, uint64_t address) {
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath,
                           DILineInfoSpecifier::FunctionNameKind::LinkageName);
  object::SectionedAddress where{address, object::SectionedAddress::UndefSection};
  DILineInfo line = module.symbolizeCode(where, spec, /*UseSymbolTable=*/true);
  DIInliningInfo frames = module.symbolizeInlinedCode(where, spec, /*UseSymbolTable=*/true);
  const DILineInfo &physical = frames.getFrame(frames.getNumberOfFrames() - 1);
  return line.FunctionName + " " + std::to_string(line.StartAddress.value_or(~0ull)) + " " + line.FileName + " | " +
         physical.FunctionName + " " + std::to_string(physical.StartAddress.value_or(~0ull)) + " " + physical.FileName;
}

// Whether LLVM names the address after a symbol of size 0 whose own section
// ends at or before it: there our module names nothing (ElfSymbolTable.h).
bool llvmNamesPastLabelsSection(const symbolize::SymbolizableModule &llvms, const object::ObjectFile &object,
                                uint64_t address) {
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::RawValue,
                           DILineInfoSpecifier::FunctionNameKind::LinkageName);
  DILineInfo line = llvms.symbolizeCode({address, object::SectionedAddress::UndefSection}, spec, /*UseSymbolTable=*/true);
  for (const object::ELFSymbolRef symbol : cast<object::ELFObjectFileBase>(object).symbols()) {
    Expected<StringRef> name = symbol.getName();
    Expected<uint64_t> start = symbol.getAddress();
    Expected<object::section_iterator> section = symbol.getSection();
    if (!name || !start || !section || *section == object.section_end()) {
      consumeError(name.takeError()), consumeError(start.takeError()), consumeError(section.takeError());
      continue;
    }
    if (*name == line.FunctionName && *start == line.StartAddress && symbol.getSize() == 0 &&
        address >= (*section)->getAddress() + (*section)->getSize())
      return true;
  }
  return false;
}

// Our module and LLVM's over the same file, both without DWARF.
struct BothModules {
  explicit BothModules(const object::ObjectFile &object) : object(object) {
    auto table = ElfSymbolTable::read(object);
    REQUIRE(table);
    ours = std::make_unique<ElfSymbolizableModule>(object, std::make_shared<const ElfSymbolTable>(std::move(*table)), noDwarf());
    auto created = symbolize::SymbolizableObjectFile::create(&object, noDwarf(), /*UntagAddresses=*/false);
    REQUIRE(bool(created));
    llvms = std::move(*created);
  }
  // The addresses where the two differ, with what each says, but where LLVM
  // names a label past its section and ours nothing.
  std::vector<std::string> differences(const std::vector<uint64_t> &addresses) const {
    std::vector<std::string> found;
    const std::string none = std::string(DILineInfo::BadString) + " " + std::to_string(~0ull) + " " + DILineInfo::BadString;
    const std::string nothing = none + " | " + none; // describe's text where no symbol names the address
    for (uint64_t address : addresses) {
      std::string mine = describe(*ours, address), theirs = describe(*llvms, address);
      if (mine == theirs || (mine == nothing && llvmNamesPastLabelsSection(*llvms, object, address))) continue;
      found.push_back(std::to_string(address) + ": " + mine + " / LLVM: " + theirs);
    }
    return found;
  }
  const object::ObjectFile &object;
  std::unique_ptr<symbolize::SymbolizableModule> ours, llvms;
};

std::string nameAt(const ElfSymbolTable &table, uint64_t address) {
  auto symbol = table.at(address);
  return symbol ? symbol->name.str() + (symbol->file.empty() ? "" : " in " + symbol->file.str()) : "(none)";
}

// Around each symbol the file has: where it starts, inside, at its end and just before it.
std::vector<uint64_t> addressesAroundSymbols(const object::ObjectFile &object) {
  std::vector<uint64_t> addresses;
  auto add = [&](const object::ELFSymbolRef &symbol) {
    Expected<uint64_t> address = symbol.getAddress();
    if (!address) return consumeError(address.takeError());
    for (uint64_t at : {*address - 1, *address, *address + symbol.getSize() / 2, *address + symbol.getSize()})
      addresses.push_back(at);
  };
  const auto &elf = cast<object::ELFObjectFileBase>(object);
  for (const object::ELFSymbolRef symbol : elf.symbols()) add(symbol);
  for (const object::ELFSymbolRef symbol : elf.getDynamicSymbolIterators()) add(symbol);
  return addresses;
}

} // namespace

TEST_CASE("the symbol holding an address, as LLVM's symbolizer picks it") {
  auto file = symbolsFile("EM_X86_64");
  auto object = objectOf(*file);
  auto table = ElfSymbolTable::read(*object);
  REQUIRE(table);
  CHECK(nameAt(*table, 0x1004) == "helper in a.c"); // not the warning at 0x1000
  CHECK(nameAt(*table, 0x1012) == "table in a.c");
  CHECK(nameAt(*table, 0x1025) == "alias2");       // the largest at its address, the last of equals
  CHECK(nameAt(*table, 0x1058) == "asm_entry");    // size 0: up to the next symbol kept
  CHECK(nameAt(*table, 0x1066) == "asm_entry");    // TLS and absolute symbols are not
  CHECK(nameAt(*table, 0x1092) == "static_b in b.c");
  CHECK(nameAt(*table, 0x10a2) == "(none)");       // past static_b's end; past_sections is in no section
  CHECK(nameAt(*table, 0x1042) == "$d in b.c");   // a mapping symbol only on ARM and AArch64
  CHECK(nameAt(*table, 0x1101) == "thumb_func");
  CHECK(nameAt(*table, 0x3012) == "counter in b.c");
  CHECK(nameAt(*table, 0x0fff) == "(none)");
  CHECK(nameAt(*table, 0x30ff) == "data_label"); // size 0: up to its section's end (LLVM: on and on)
  CHECK(nameAt(*table, 0x3100) == "(none)");
  CHECK(nameAt(*table, 0x1200) == "(none)"); // at its section's end: names nothing
  CHECK(nameAt(*table, 0x1300) == "(none)");
  CHECK(table->at(0x1025)->start == 0x1020);
  CHECK(table->named("alias1").empty()); // not kept: alias2 names its address
  CHECK(table->named("resolver").size() == 1);
}

TEST_CASE("ARM's Thumb bit and mapping symbols, as LLVM reads them") {
  auto arm = symbolsFile("EM_ARM");
  auto object = objectOf(*arm);
  auto table = ElfSymbolTable::read(*object);
  REQUIRE(table);
  CHECK(nameAt(*table, 0x1100) == "thumb_func"); // starts at 0x1100
  CHECK(table->at(0x1104)->start == 0x1100);
  CHECK(nameAt(*table, 0x101a) == "(none)");     // $t is left out: table ends at 0x1018
  CHECK(nameAt(*table, 0x1042) == "(none)");     // so are $d and the nameless label
  auto aarch64 = symbolsFile("EM_AARCH64");
  auto object64 = objectOf(*aarch64);
  auto table64 = ElfSymbolTable::read(*object64);
  REQUIRE(table64);
  CHECK(nameAt(*table64, 0x1046) == " in b.c"); // $x.1 and $d are left out, not the nameless label
  CHECK(nameAt(*table64, 0x101a) == "$t in a.c"); // ARM's mapping symbol is a label here
}

TEST_CASE("our symbolizer module answers as LLVM's at every address of each machine's file") {
  for (const char *machine : {"EM_X86_64", "EM_386", "EM_ARM", "EM_AARCH64"}) {
    INFO(machine);
    auto file = symbolsFile(machine);
    auto object = objectOf(*file);
    BothModules modules(*object);
    std::vector<uint64_t> addresses;
    for (uint64_t address = 0xff0; address < 0x1200; ++address) addresses.push_back(address);
    for (uint64_t address = 0x3000; address < 0x3020; ++address) addresses.push_back(address);
    CHECK(modules.differences(addresses).empty());
    for (const char *name : {"helper", "alias2", "asm_entry", "thumb_func", "counter", "absolute"})
      CHECK(modules.ours->findSymbol(name, 2) == modules.llvms->findSymbol(name, 2));
  }
}

TEST_CASE("our symbolizer module answers as LLVM's on real files: this test program, libc, debug files") {
  std::vector<std::string> paths = {"/proc/self/exe"};
  for (const char *libc : {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"})
    if (std::filesystem::exists(libc)) paths.push_back(libc);
  std::error_code error;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(
           STACKWALK_DUMPS_DIR "/sysroot/usr/lib/debug/.build-id", error))
    if (entry.path().extension() == ".debug") paths.push_back(entry.path().string());
  for (const std::string &path : paths) {
    INFO(path);
    auto file = MemoryBuffer::getFile(path);
    REQUIRE(bool(file));
    auto object = objectOf(**file);
    BothModules modules(*object);
    auto addresses = addressesAroundSymbols(*object);
    CHECK(addresses.size() > 100);
    CHECK(modules.differences(addresses) == std::vector<std::string>());
  }
}

TEST_CASE("files this reading could differ on are left to LLVM") {
  auto relocatable = symbolsFile("EM_X86_64", "ET_REL"); // symbols are offsets in their sections
  CHECK_FALSE(ElfSymbolTable::read(*objectOf(*relocatable)));
  auto riscv = symbolsFile("EM_RISCV"); // other mapping symbols
  CHECK_FALSE(ElfSymbolTable::read(*objectOf(*riscv)));

  std::string yaml = kSymbolsYaml;
  auto withSymbol = [&](const std::string &symbol) {
    return elfFromYaml(replaced(yaml, {{"CLASS", "ELFCLASS64"}, {"TYPE", "ET_DYN"}, {"MACHINE", "EM_X86_64"},
                                       {"  - {Name: elsewhere", symbol + "\n  - {Name: elsewhere"}}));
  };
  // A name past the string table: LLVM refuses the whole table, and says why.
  auto badName = withSymbol("  - {Name: bad, StName: 0xffff, Type: STT_FUNC, Section: .text, Value: 0x1100}");
  auto badObject = objectOf(*badName);
  CHECK_FALSE(ElfSymbolTable::read(*badObject));
  auto refused = symbolize::SymbolizableObjectFile::create(badObject.get(), noDwarf(), false);
  CHECK_FALSE(bool(refused));
  consumeError(refused.takeError());
  // A nameless section symbol is named after its section, which must be there.
  auto sectionSymbol = withSymbol("  - {Name: '', Type: STT_SECTION, Section: .text}");
  CHECK(ElfSymbolTable::read(*objectOf(*sectionSymbol)));
  auto strayIndex = withSymbol("  - {Name: '', Type: STT_SECTION, Index: 0x7f}");
  CHECK_FALSE(ElfSymbolTable::read(*objectOf(*strayIndex)));
}

TEST_CASE("a nameless section symbol in no section is read by neither (LLVM would read past the section headers)") {
  auto fileWith = [](const std::string &type, const std::string &symbol) {
    return elfFromYaml(replaced(kSymbolsYaml, {{"CLASS", "ELFCLASS64"}, {"TYPE", type}, {"MACHINE", "EM_X86_64"},
                                               {"  - {Name: elsewhere", symbol + "\n  - {Name: elsewhere"}}));
  };
  for (const char *index : {"SHN_UNDEF", "SHN_ABS"}) {
    std::string symbol = std::string("  - {Name: '', Type: STT_SECTION, Index: ") + index + "}";
    auto linked = fileWith("ET_DYN", symbol);
    auto table = ElfSymbolTable::read(*objectOf(*linked)); // left out, unnamed
    REQUIRE(table);
    CHECK(nameAt(*table, 0x1025) == "alias2");
    auto relocatable = fileWith("ET_REL", symbol); // a file ElfSymbolTable leaves to LLVM
    CHECK_FALSE(llvmReadsSymbolNamesInBounds(*objectOf(*relocatable)));
  }
  auto inSection = fileWith("ET_REL", "  - {Name: '', Type: STT_SECTION, Section: .text}");
  CHECK(llvmReadsSymbolNamesInBounds(*objectOf(*inSection)));
}

TEST_CASE("a nameless section symbol in no section in .dynsym: no name looked up reads past the section headers") {
  // fuzz/findings/llvm19-elf-nameless-section-symbol-in-dynsym: a 32-bit file's
  // dynamic symbols, which ModuleImage's index of names read through LLVM.
  std::string yaml = replaced(kSymbolsYaml, {{"CLASS", "ELFCLASS32"}, {"TYPE", "ET_DYN"}, {"MACHINE", "EM_386"}});
  yaml += "DynamicSymbols:\n  - {Name: exported, Type: STT_FUNC, Section: .text, Value: 0x1000, Binding: STB_GLOBAL}\n"
          "  - {Name: '', Type: STT_SECTION, Index: SHN_UNDEF}\n";
  auto file = elfFromYaml(yaml);
  CHECK(llvmReadsSymbolNamesInBounds(*objectOf(*file))); // the symbolizer reads .symtab
  CHECK_FALSE(llvmReadsAllSymbolNamesInBounds(*objectOf(*file)));
  auto image = ModuleImage::fromFileBuffer(MemoryBuffer::getMemBufferCopy(file->getBuffer()), "dynsym");
  REQUIRE(bool(image));
  for (const char *name : {"exported", "helper", "missing", "another", "more", "index"}) // past the scans, the index
    CHECK_FALSE((*image)->symbolAddress(name));
}

TEST_CASE("a symbol table with no symbols, not even the null one, is read by neither and no name is looked up in it") {
  // An empty SHT_SYMTAB beside the one with symbols (found by fuzz_module_image, in the check above).
  std::string yaml = replaced(kSymbolsYaml, {{"CLASS", "ELFCLASS32"}, {"TYPE", "ET_DYN"}, {"MACHINE", "EM_386"}});
  yaml = replaced(yaml, {{"Sections:\n", "Sections:\n  - {Name: .empty, Type: SHT_SYMTAB, Link: .strtab, EntSize: 16, Size: 0}\n"}});
  auto file = elfFromYaml(yaml);
  CHECK(llvmReadsAllSymbolNamesInBounds(*objectOf(*file)));
}
