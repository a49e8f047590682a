#include "stackwalk/core/PltStubs.h"

#include "stackwalk/core/Symbolizer.h"

#include "ElfFromYaml.h"

#include "llvm/Object/ObjectFile.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace llvm;

namespace {

// x86-64 stubs as GNU ld writes them: .plt's header, then each stub's `jmp
// *slot(%rip)`, `push index`, `jmp .plt`: strlen's and atoi's slots, then an
// IRELATIVE one (no function); in .plt.got an IBT stub (endbr64, bnd jmp)
// through free's GLOB_DAT slot. Before them .init, whose _init has size 0.
const char *const kX86_64 = R"(
--- !ELF
FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_DYN, Machine: EM_X86_64}
Sections:
  - {Name: .init, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_EXECINSTR], Address: 0x1000, Size: 0x17}
  - Name: .plt
    Type: SHT_PROGBITS
    Flags: [SHF_ALLOC, SHF_EXECINSTR]
    Address: 0x1020
    Content: ff35e22f0000ff25e42f00000f1f4000ff25e22f00006800000000e9e0ffffffff25da2f00006801000000e9d0ffffffff25d22f00006802000000e9c0ffffff
  - Name: .plt.got
    Type: SHT_PROGBITS
    Flags: [SHF_ALLOC, SHF_EXECINSTR]
    Address: 0x1060
    Content: f30f1efaf2ff25c52f00000f1f440000
  - {Name: .got.plt, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x4000, Size: 0x30}
  - {Name: .got, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x4030, Size: 0x8}
  - Name: .rela.plt
    Type: SHT_RELA
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Relocations:
      - {Offset: 0x4018, Symbol: strlen, Type: R_X86_64_JUMP_SLOT}
      - {Offset: 0x4020, Symbol: atoi, Type: R_X86_64_JUMP_SLOT}
      - {Offset: 0x4028, Type: R_X86_64_IRELATIVE, Addend: 0x1100}
  - Name: .rela.dyn
    Type: SHT_RELA
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Relocations:
      - {Offset: 0x4030, Symbol: free, Type: R_X86_64_GLOB_DAT}
DynamicSymbols:
  - {Name: strlen, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: atoi, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: free, Type: STT_FUNC, Binding: STB_GLOBAL}
Symbols:
  - {Name: _init, Type: STT_FUNC, Section: .init, Value: 0x1000, Binding: STB_GLOBAL}
ProgramHeaders:
  - {Type: PT_LOAD, Flags: [PF_R, PF_X], FirstSec: .init, LastSec: .plt.got, VAddr: 0x1000}
)";

// i386: the header's `push 4(%ebx)`, `jmp *8(%ebx)`; a PIC stub `jmp
// *0xc(%ebx)` (ebx = .got.plt), one after endbr32, and a non-PIC `jmp
// *0x4014`; REL relocations.
const char *const kI386 = R"(
--- !ELF
FileHeader: {Class: ELFCLASS32, Data: ELFDATA2LSB, Type: ET_DYN, Machine: EM_386}
Sections:
  - Name: .plt
    Type: SHT_PROGBITS
    Flags: [SHF_ALLOC, SHF_EXECINSTR]
    Address: 0x1020
    Content: ffb304000000ffa30800000000000000ffa30c0000006800000000e9e0fffffff30f1efbffa310000000660f1f440000ff25144000006810000000e9c0ffffff
  - {Name: .got.plt, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x4000, Size: 0x18}
  - Name: .rel.plt
    Type: SHT_REL
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Relocations:
      - {Offset: 0x400c, Symbol: strlen, Type: R_386_JUMP_SLOT}
      - {Offset: 0x4010, Symbol: atoi, Type: R_386_JUMP_SLOT}
      - {Offset: 0x4014, Symbol: free, Type: R_386_JUMP_SLOT}
DynamicSymbols:
  - {Name: strlen, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: atoi, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: free, Type: STT_FUNC, Binding: STB_GLOBAL}
)";

// AArch64: the header (stp, then adrp/ldr/add/br through .got.plt+0x10);
// strlen's stub; atoi's after `bti c`; free's through a GLOB_DAT slot in a
// .got below .plt (adrp back 8 pages); nop padding.
const char *const kAArch64 = R"(
--- !ELF
FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_DYN, Machine: EM_AARCH64}
Sections:
  - {Name: .got, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x8000, Size: 0x20}
  - Name: .plt
    Type: SHT_PROGBITS
    Flags: [SHF_ALLOC, SHF_EXECINSTR]
    Address: 0x10000
    Content: f07bbfa990000090110a40f91042009120021fd61f2003d51f2003d51f2003d590000090110e40f91062009120021fd65f2403d590000090111240f91082009120021fd6d0ffff90110a40f91042009120021fd61f2003d51f2003d51f2003d5
  - {Name: .got.plt, Type: SHT_PROGBITS, Flags: [SHF_ALLOC, SHF_WRITE], Address: 0x20000, Size: 0x30}
  - Name: .rela.plt
    Type: SHT_RELA
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Relocations:
      - {Offset: 0x20018, Symbol: strlen, Type: R_AARCH64_JUMP_SLOT}
      - {Offset: 0x20020, Symbol: atoi, Type: R_AARCH64_JUMP_SLOT}
  - Name: .rela.dyn
    Type: SHT_RELA
    Flags: [SHF_ALLOC]
    Link: .dynsym
    Relocations:
      - {Offset: 0x8010, Symbol: free, Type: R_AARCH64_GLOB_DAT}
DynamicSymbols:
  - {Name: strlen, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: atoi, Type: STT_FUNC, Binding: STB_GLOBAL}
  - {Name: free, Type: STT_FUNC, Binding: STB_GLOBAL}
)";

PltStubs stubsOf(const std::string &yaml) {
  auto file = test::elfFromYaml(yaml);
  auto object = object::ObjectFile::createObjectFile(file->getMemBufferRef());
  REQUIRE(bool(object));
  return PltStubs::read(**object);
}

std::string stubAt(const PltStubs &stubs, uint64_t address) {
  const PltStubs::Stub *stub = stubs.at(address);
  return stub ? stub->name + " " + std::to_string(stub->start) + "-" + std::to_string(stub->end) : "(none)";
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  return text.replace(text.find(from), from.size(), to);
}

} // namespace

TEST_CASE("x86-64 PLT stubs are named after the functions their GOT slots hold") {
  PltStubs stubs = stubsOf(kX86_64);
  CHECK(stubs.stubs().size() == 3);
  CHECK(stubAt(stubs, 0x1020) == "(none)"); // the header
  CHECK(stubAt(stubs, 0x102c) == "(none)"); // its jump, through a slot no relocation fills
  CHECK(stubAt(stubs, 0x1030) == "strlen@plt 4144-4160");
  CHECK(stubAt(stubs, 0x103f) == "strlen@plt 4144-4160");
  CHECK(stubAt(stubs, 0x1046) == "atoi@plt 4160-4176");
  CHECK(stubAt(stubs, 0x1055) == "(none)"); // the IRELATIVE slot's stub: no function
  CHECK(stubAt(stubs, 0x1060) == "free@plt 4192-4208"); // from its endbr64
  CHECK(stubAt(stubs, 0x1070) == "(none)");
}

TEST_CASE("i386 PLT stubs: slots from ebx (.got.plt), after endbr32, and absolute") {
  PltStubs stubs = stubsOf(kI386);
  CHECK(stubAt(stubs, 0x1026) == "(none)");
  CHECK(stubAt(stubs, 0x1030) == "strlen@plt 4144-4160");
  CHECK(stubAt(stubs, 0x1040) == "atoi@plt 4160-4176");
  CHECK(stubAt(stubs, 0x1050) == "free@plt 4176-4192");
}

TEST_CASE("AArch64 PLT stubs: adrp and ldr give the slot, forwards and backwards, after bti c") {
  PltStubs stubs = stubsOf(kAArch64);
  CHECK(stubAt(stubs, 0x10004) == "(none)");
  CHECK(stubAt(stubs, 0x10020) == "strlen@plt 65568-65584");
  CHECK(stubAt(stubs, 0x10030) == "atoi@plt 65584-65604");
  CHECK(stubAt(stubs, 0x10044) == "free@plt 65604-65632");
}

TEST_CASE("no stubs from a debug file or an object file, nor for relocations that name no readable symbol") {
  // A separate debug file keeps .plt's header, without its contents.
  std::string debugFile = replaced(kX86_64, "Name: .plt\n    Type: SHT_PROGBITS", "Name: .plt\n    Type: SHT_NOBITS");
  debugFile = replaced(debugFile, "Content: ff35", "Size: 0x40\n# ff35"); // the contents left as a comment
  CHECK(stubsOf(debugFile).stubs().size() == 1); // .plt.got's only
  CHECK(stubsOf(replaced(kX86_64, "ET_DYN", "ET_REL")).stubs().empty());
  PltStubs past = stubsOf(replaced(kX86_64, "Symbol: strlen", "Symbol: 99")); // past .dynsym
  CHECK(stubAt(past, 0x1030) == "(none)");
  CHECK(stubAt(past, 0x1040) == "atoi@plt 4160-4176");
}

TEST_CASE("the symbolizer names an address in a stub after it, and none after .init's size-0 _init") {
  auto file = test::elfFromYaml(kX86_64);
  std::vector<uint8_t> bytes(file->getBufferStart(), file->getBufferEnd());
  auto image = ModuleImage::fromBytes(std::move(bytes), "stubs");
  REQUIRE(bool(image));
  Module module;
  module.name = "stubs";
  module.base = (*image)->preferredBase(); // loaded where it was linked: addresses are file addresses
  module.size = 0x10000;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  Symbolizer symbolizer;
  auto nameAt = [&](uint64_t address) {
    std::vector<SourceFrame> frames = symbolizer.symbolize(module, address);
    return frames.empty() ? std::string("(no frame)") : frames.back().function;
  };
  CHECK(nameAt(0x1004) == "_init");
  CHECK(nameAt(0x1034) == "strlen@plt");
  CHECK(nameAt(0x1024) == "(no frame)"); // LLVM's symbolizer says _init+0x24
}
