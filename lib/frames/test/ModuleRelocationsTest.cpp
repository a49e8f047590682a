#include "ModuleRelocations.h"

#include "YamlImage.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::frames;

namespace {

// A shared object whose .data (at 0x2000) holds 0x1111... in its 4th word and
// zeros elsewhere, and two RELA sections. .rela.early comes first in the file,
// so the loader applies it first. .rela.dyn starts with a sorted run of
// RELATIVE relocations (the one ModuleRelocations searches in place, with a
// duplicate whose later entry wins), then out of order: a 64-bit pointer to
// a symbol the module defines, one to an undefined symbol (no value of the
// module's), and a RELATIVE one that overrides the run's first.
const char *const kYaml = R"(
--- !ELF
FileHeader: {Class: ELFCLASS64, Data: ELFDATA2LSB, Type: ET_DYN, Machine: EM_X86_64}
ProgramHeaders:
  - {Type: PT_LOAD, Flags: [PF_R, PF_W], FirstSec: .data, LastSec: .data, VAddr: 0x2000, Align: 0x1000}
Sections:
  - Name: .data
    Type: SHT_PROGBITS
    Flags: [SHF_ALLOC, SHF_WRITE]
    Address: 0x2000
    AddressAlign: 8
    Content: "000000000000000000000000000000000000000000000000111111111111111100000000000000000000000000000000"
  - Name: .rela.early
    Type: SHT_RELA
    Link: .dynsym
    Relocations:
      - {Offset: 0x2020, Type: R_X86_64_RELATIVE, Addend: 0x77}
  - Name: .rela.dyn
    Type: SHT_RELA
    Link: .dynsym
    Relocations:
      - {Offset: 0x2000, Type: R_X86_64_RELATIVE, Addend: 0x10}
      - {Offset: 0x2008, Type: R_X86_64_RELATIVE, Addend: 0x20}
      - {Offset: 0x2008, Type: R_X86_64_RELATIVE, Addend: 0x21}
      - {Offset: 0x2010, Type: R_X86_64_RELATIVE, Addend: 0x30}
      - {Offset: 0x2020, Type: R_X86_64_RELATIVE, Addend: 0x40}
      - {Offset: 0x2010, Type: R_X86_64_64, Symbol: answer, Addend: 1}
      - {Offset: 0x2020, Type: R_X86_64_GLOB_DAT, Symbol: elsewhere}
      - {Offset: 0x2000, Type: R_X86_64_RELATIVE, Addend: 0x99}
DynamicSymbols:
  - {Name: answer, Section: .data, Value: 0x2028, Binding: STB_GLOBAL}
  - {Name: elsewhere, Binding: STB_GLOBAL}
)";


} // namespace

TEST_CASE("pointers a module file leaves to its loader: the last relocation of each address that sets a value") {
  Module module;
  module.name = "relocated.so";
  module.base = 0x7f0000000000;
  module.size = 0x4000;
  module.image = synthetic::imageFromYaml(kYaml, "relocated.so");
  ModuleRelocations relocations(module);
  uint64_t bias = module.loadBias();
  auto at = [&](uint64_t fileAddress) { return relocations.pointerAt(bias + fileAddress, 8); };
  CHECK(at(0x2000) == bias + 0x99);        // out of order after the run, later in the file
  CHECK(at(0x2008) == bias + 0x21);        // the run's second entry for it
  CHECK(at(0x2010) == bias + 0x2028 + 1);  // the module's own symbol, after the run's entry
  CHECK(at(0x2020) == bias + 0x40);        // the undefined symbol's sets no value; .rela.early came before
  CHECK(at(0x2018) == 0x1111111111111111); // no relocation: the file's bytes
  CHECK(at(0x2028) == 0);
  CHECK_FALSE(relocations.pointerAt(module.base + module.size, 8)); // outside the module
}
