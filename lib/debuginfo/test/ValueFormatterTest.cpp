// Values formatted with real DWARF types: the globals of data/types.c (built
// into data/types.o by gcc -g), their bytes from the object's .data, and the
// text gdb 13 prints for each (`print NAME` on types.o).
#include "ValueFormatter.h"

#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/Object/ObjectFile.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace llvm;

namespace {

class TypesObject {
public:
  TypesObject() {
    auto file = object::ObjectFile::createObjectFile(STACKWALK_DEBUGINFO_TEST_DATA "/types.o");
    REQUIRE(bool(file));
    file_ = std::move(*file);
    dwarf_ = DWARFContext::create(*file_.getBinary());
  }

  DWARFDie typeOf(StringRef name) {
    for (const auto &unit : dwarf_->compile_units())
      for (const DWARFDie &die : unit->getUnitDIE(false).children())
        if (die.getTag() == dwarf::DW_TAG_variable && die.getShortName() && name == die.getShortName())
          return die.getAttributeValueAsReferencedDie(dwarf::DW_AT_type);
    FAIL("no variable " << name.str());
    return {};
  }

  ObjectBytes bytesOf(StringRef name, uint64_t size) {
    ObjectBytes object;
    for (const object::SymbolRef &symbol : file_.getBinary()->symbols()) {
      if (!symbol.getName() || *symbol.getName() != name) continue;
      auto section = *symbol.getSection();
      uint64_t offset = *symbol.getValue();
      if (section->isBSS()) {
        object.bytes.assign(size, 0);
      } else {
        StringRef contents = *section->getContents();
        object.bytes.assign(contents.begin() + offset, contents.begin() + offset + size);
      }
      object.known.assign(size, true);
    }
    return object;
  }

  std::optional<std::string> print(StringRef name, const MemorySource &memory = BufferMemory()) {
    DWARFDie type = typeOf(name);
    return formatValue(type, bytesOf(name, *typeSize(type, 8)), memory, 8);
  }

private:
  object::OwningBinary<object::ObjectFile> file_;
  std::unique_ptr<DWARFContext> dwarf_;
};

} // namespace

TEST_CASE("scalars print as gdb prints them") {
  TypesObject types;
  CHECK(types.print("v_int") == "-199");
  CHECK(types.print("v_ulong") == "18446744073709551615");
  CHECK(types.print("v_char") == "113 'q'");
  CHECK(types.print("v_schar") == "-1 '\\377'");
  CHECK(types.print("v_newline") == "10 '\\n'");
  CHECK(types.print("v_bool") == "true");
  CHECK(types.print("v_enum") == "GREEN");
  CHECK(types.print("v_enum_unknown") == "7");
  CHECK(types.print("v_float") == "3.5");
  CHECK(types.print("v_double") == "0.10000000000000001");
  CHECK(types.print("v_null") == "0x0");
}

TEST_CASE("aggregates print member by member") {
  TypesObject types;
  CHECK(types.print("v_point") == "{x = 3, y = -4}");
  CHECK(types.print("v_typedef") == "{x = 1, y = 2}");
  CHECK(types.print("v_flags") == "{a = 5, b = -3, c = true}");
  CHECK(types.print("v_nested") == "{p = {x = 1, y = 2}, c = BLUE, name = \"abc\\000\\000\\000\\000\", d = 2.25}");
  CHECK(types.print("v_union") == "{i = 1, f = 1.40129846e-45}");
  CHECK(types.print("v_array") == "{7, 8, 9}");
  CHECK(types.print("v_repeats") == "{0 <repeats 12 times>}");
  CHECK(types.print("v_text") == "\"hello\\000\\000\\000\\000\\000\\000\\000\\000\\000\\000\"");
}

TEST_CASE("a char pointer shows the string it points to, escaped") {
  TypesObject types;
  DWARFDie type = types.typeOf("v_string");
  BufferMemory memory;
  std::string text = "hi\t\"there\"";
  memory.add(0x1000, std::vector<uint8_t>(text.begin(), text.end() + 1));
  ObjectBytes pointer;
  pointer.bytes = {0x00, 0x10, 0, 0, 0, 0, 0, 0};
  pointer.known.assign(8, true);
  CHECK(formatValue(type, pointer, memory, 8) == "0x1000 \"hi\\t\\\"there\\\"\"");
  pointer.bytes[1] = 0x20; // unreadable: the address alone
  CHECK(formatValue(type, pointer, memory, 8) == "0x2000");
}

TEST_CASE("unknown bytes: no value for a scalar, <optimized out> for a member") {
  TypesObject types;
  DWARFDie type = types.typeOf("v_point");
  ObjectBytes object = types.bytesOf("v_point", 8);
  object.known[5] = false; // a byte of y
  CHECK(formatValue(type, object, BufferMemory(), 8) == "{x = 3, y = <optimized out>}");
  object.known.assign(8, false);
  CHECK(formatValue(type, object, BufferMemory(), 8) == std::nullopt);
  CHECK(typeName(type) == "struct point"); // C spells the keyword, as gdb's whatis does
  CHECK(typeName(types.typeOf("v_typedef")) == "point_t");
  CHECK(typeName(types.typeOf("v_enum")) == "enum color");
  CHECK(typeName(types.typeOf("v_string")) == "const char *");
}
