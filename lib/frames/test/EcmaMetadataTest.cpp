#include "stackwalk/frames/EcmaMetadata.h"

#include "llvm/Support/Endian.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

using namespace stackwalk::frames;

namespace {

constexpr uint32_t TypeDefToken = 0x02000000, MethodDefToken = 0x06000000;
constexpr uint8_t Module = 0x00, TypeRef = 0x01, TypeDef = 0x02, MethodPtr = 0x05, MethodDef = 0x06,
                  MemberRef = 0x0a, CustomAttribute = 0x0c, Assembly = 0x20, NestedClass = 0x29,
                  GenericParam = 0x2a, GenericParamConstraint = 0x2c;

std::filesystem::path dataFile(const char *name) { return std::filesystem::path(__FILE__).parent_path() / "data" / name; }

std::vector<uint8_t> readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void put16(std::vector<uint8_t> &out, uint32_t v) { out.insert(out.end(), {uint8_t(v), uint8_t(v >> 8)}); }
void put32(std::vector<uint8_t> &out, uint32_t v) { put16(out, v), put16(out, v >> 16); }
void pad4(std::vector<uint8_t> &out) { out.resize((out.size() + 3) & ~size_t(3)); }

// The metadata root (II.24.2.1) over the given streams, in order.
std::vector<uint8_t> root(const std::vector<std::pair<std::string, std::vector<uint8_t>>> &streams) {
  std::vector<uint8_t> out;
  put32(out, 0x424a5342);
  put16(out, 1), put16(out, 1), put32(out, 0);
  std::string version = "v4.0.30319";
  put32(out, 12);
  out.insert(out.end(), version.begin(), version.end());
  pad4(out);
  put16(out, 0), put16(out, uint16_t(streams.size()));
  size_t headers = 0;
  for (auto &[name, bytes] : streams) headers += 8 + ((name.size() + 4) & ~size_t(3));
  size_t data = out.size() + headers;
  for (auto &[name, bytes] : streams) {
    put32(out, uint32_t(data)), put32(out, uint32_t(bytes.size()));
    out.insert(out.end(), name.begin(), name.end());
    out.push_back(0);
    pad4(out);
    data += (bytes.size() + 3) & ~size_t(3);
  }
  for (auto &[name, bytes] : streams) {
    out.insert(out.end(), bytes.begin(), bytes.end());
    pad4(out);
  }
  return out;
}

// A #~ stream: its header, the row counts, then the rows' bytes as given.
std::vector<uint8_t> tableStream(const std::map<uint8_t, uint32_t> &counts, const std::vector<uint8_t> &rows,
                                 uint8_t heapSizes = 0) {
  std::vector<uint8_t> out;
  put32(out, 0);
  out.insert(out.end(), {2, 0, heapSizes, 1});
  uint64_t valid = 0;
  for (auto &[table, count] : counts) valid |= uint64_t(1) << table;
  put32(out, uint32_t(valid)), put32(out, uint32_t(valid >> 32));
  put32(out, 0), put32(out, 0); // sorted
  for (auto &[table, count] : counts) put32(out, count);
  out.insert(out.end(), rows.begin(), rows.end());
  return out;
}

// Small metadata (every index two bytes wide) built from cells in schema order.
struct MetadataBuilder {
  std::vector<uint8_t> strings{0}, blobs{0};
  std::map<uint8_t, std::vector<std::vector<uint32_t>>> rows;
  std::string tablesName = "#~";

  uint32_t string(const std::string &s) {
    uint32_t at = uint32_t(strings.size());
    strings.insert(strings.end(), s.begin(), s.end());
    strings.push_back(0);
    return at;
  }
  uint32_t blob(const std::vector<uint8_t> &b) {
    uint32_t at = uint32_t(blobs.size());
    blobs.push_back(uint8_t(b.size()));
    blobs.insert(blobs.end(), b.begin(), b.end());
    return at;
  }
  uint32_t type(const std::string &space, const std::string &name, uint32_t firstMethod) {
    rows[TypeDef].push_back({0, string(name), string(space), 0, 1, firstMethod});
    return TypeDefToken | uint32_t(rows[TypeDef].size());
  }
  uint32_t method(const std::string &name, const std::vector<uint8_t> &signature = {0, 0, 1}) {
    rows[MethodDef].push_back({0, 0, 0, string(name), blob(signature), 1});
    return MethodDefToken | uint32_t(rows[MethodDef].size());
  }
  void assembly(const std::string &name) { rows[Assembly].push_back({0x8004, 10, 0, 0, 0, 0, 0, string(name), 0}); }
  // A constructor named through a MemberRef on a TypeRef, as other assemblies' attributes are.
  uint32_t constructorOf(const std::string &space, const std::string &name) {
    rows[TypeRef].push_back({0, string(name), string(space)});
    rows[MemberRef].push_back({uint32_t(rows[TypeRef].size()) << 3 | 1, string(".ctor"), blob({0x20, 1, 1, 0x0e})});
    return 0x0a000000 | uint32_t(rows[MemberRef].size());
  }
  // A CustomAttribute on the assembly (HasCustomAttribute tag 14), rows added in parent order.
  void assemblyAttribute(uint32_t constructor, const std::vector<uint8_t> &value) {
    uint32_t tag = constructor >> 24 == MethodDef ? 2 : 3;
    rows[CustomAttribute].push_back({1u << 5 | 14, (constructor & 0xffffff) << 3 | tag, blob(value)});
  }
  void nest(uint32_t inner, uint32_t outer) { rows[NestedClass].push_back({inner & 0xffffff, outer & 0xffffff}); }
  void generic(uint32_t owner, uint16_t number, const std::string &name) {
    uint32_t coded = (owner & 0xffffff) << 1 | (owner >> 24 == MethodDef ? 1 : 0);
    rows[GenericParam].push_back({number, 0, coded, string(name)});
  }

  std::vector<uint8_t> build() const {
    static const std::map<uint8_t, std::vector<unsigned>> widths{
        {TypeRef, {2, 2, 2}}, {TypeDef, {4, 2, 2, 2, 2, 2}}, {MethodPtr, {2}}, {MethodDef, {4, 2, 2, 2, 2, 2}},
        {MemberRef, {2, 2, 2}}, {CustomAttribute, {2, 2, 2}}, {Assembly, {4, 2, 2, 2, 2, 4, 2, 2, 2}},
        {NestedClass, {2, 2}}, {GenericParam, {2, 2, 2, 2}}};
    std::map<uint8_t, uint32_t> counts;
    std::vector<uint8_t> data;
    for (auto &[table, list] : rows) {
      counts[table] = uint32_t(list.size());
      for (auto &row : list)
        for (size_t c = 0; c < row.size(); ++c)
          widths.at(table)[c] == 2 ? put16(data, row[c]) : put32(data, row[c]);
    }
    return root({{tablesName, tableStream(counts, data)}, {"#Strings", strings}, {"#Blob", blobs}, {"#GUID", {}}});
  }
  EcmaMetadata parse() const;
};

EcmaMetadata require(llvm::Expected<EcmaMetadata> metadata);
EcmaMetadata MetadataBuilder::parse() const { return require(EcmaMetadata::parse(build())); }

std::string errorOf(llvm::Expected<EcmaMetadata> metadata) {
  return metadata ? "(parsed)" : llvm::toString(metadata.takeError());
}

EcmaMetadata require(llvm::Expected<EcmaMetadata> metadata) {
  if (!metadata) FAIL(llvm::toString(metadata.takeError()));
  return std::move(*metadata);
}

// Every query on every token a table could hold, and a few past the ends:
// hostile metadata must give answers or nullopt, never a crash.
void queryEverything(const EcmaMetadata &metadata) {
  for (uint32_t row = 0; row <= metadata.rowCount(MetadataTable::TypeDef) + 1; ++row) {
    (void)metadata.typeFullName(TypeDefToken | row);
    (void)metadata.genericParameterNames(TypeDefToken | row);
  }
  for (uint32_t row = 0; row <= metadata.rowCount(MetadataTable::MethodDef) + 1; ++row)
    (void)metadata.methodFullName(MethodDefToken | row);
  (void)metadata.assemblyInformationalVersion();
}

// A custom attribute's value blob holding one string argument (II.23.3).
std::vector<uint8_t> stringArgument(const std::string &text) {
  std::vector<uint8_t> value{1, 0, uint8_t(text.size())};
  value.insert(value.end(), text.begin(), text.end());
  value.insert(value.end(), {0, 0}); // no named arguments
  return value;
}

} // namespace

TEST_CASE("a test assembly's methods are named as System.Reflection.Metadata names them") {
  EcmaMetadata parsed = require(EcmaMetadata::fromPeImage(readFile(dataFile("Nested.dll")), false));
  auto metadata = &parsed;
  CHECK(metadata->version() == "v4.0.30319");
  // Printed by a System.Reflection.Metadata program with the same format.
  const std::vector<std::string> expected{
      "Global..cctor()",
      "Global.get_Property()",
      "Global.set_Property(Int32)",
      "Global..ctor()",
      "Demo.Shapes.Outer`1.Pointers(Int32*, Void (Int32), System.Object, TypedReference)",
      "Demo.Shapes.Outer`1.Get()",
      "Demo.Shapes.Outer`1..ctor()",
      "Demo.Shapes.Point..ctor(Int32)",
      "Demo.Shapes.Point.op_Addition(Demo.Shapes.Point, Demo.Shapes.Point)",
      "Demo.Shapes.Point.Nested(Inner`1<Int32,System.String>, System.Nullable`1<Demo.Shapes.Point>)",
      "Demo.Shapes.Helpers.VarArgs(Int32, ...)",
      "Demo.Shapes.Helpers.Primitives(Boolean, Char, SByte, Byte, Int16, UInt16, UInt32, Int64, UInt64, Single, "
      "Double, IntPtr, UIntPtr)",
      "Demo.Shapes.Outer`1+Inner`1.Method[V](Int32, System.String, T, U, V, Int32 ByRef, Int32[], Int32[,], "
      "System.Collections.Generic.List`1<T>, System.Collections.Generic.Dictionary`2<System.String,Int32>)",
      "Demo.Shapes.Outer`1+Inner`1..ctor()",
      "Demo.Shapes.Outer`1+Inner`1+Deepest.Leaf()",
      "Demo.Shapes.Outer`1+Inner`1+Deepest..ctor()",
  };
  REQUIRE(metadata->rowCount(MetadataTable::MethodDef) == expected.size());
  for (uint32_t row = 1; row <= expected.size(); ++row) CHECK(metadata->methodFullName(MethodDefToken | row) == expected[row - 1]);

  uint32_t method = MethodDefToken | 13;
  CHECK(metadata->methodName(method) == "Method");
  CHECK(metadata->methodFullName(method, EcmaMetadata::Parameters::Omit) == "Demo.Shapes.Outer`1+Inner`1.Method[V]");
  auto type = metadata->methodTypeDefToken(method);
  REQUIRE(type);
  CHECK(metadata->typeFullName(*type) == "Demo.Shapes.Outer`1+Inner`1");
  // A nested type repeats its enclosing types' parameters (II.10.7.1).
  CHECK(metadata->genericParameterNames(*type) == std::vector<std::string>{"T", "U"});
  CHECK(metadata->genericParameterNames(method) == std::vector<std::string>{"V"});
  CHECK(metadata->genericParameterNames(MethodDefToken | 1) == std::vector<std::string>{});
  CHECK(metadata->typeFullName(TypeDefToken | 1) == "<Module>");
  CHECK_FALSE(metadata->typeFullName(MethodDefToken | 1));
  CHECK_FALSE(metadata->methodFullName(TypeDefToken | 1));
  CHECK_FALSE(metadata->methodFullName(MethodDefToken | 17));
  CHECK_FALSE(metadata->methodFullName(MethodDefToken));
}

TEST_CASE("an image laid out as the loader maps it is read at RVA offsets") {
  std::vector<uint8_t> file = readFile(dataFile("Nested.dll"));
  REQUIRE(file.size() > 0x200);
  // Lay the sections out at their RVAs as the loader does (.text is at file
  // offset 0x200 but RVA 0x2000).
  uint32_t pe = llvm::support::endian::read32le(&file[0x3c]);
  uint16_t sections = llvm::support::endian::read16le(&file[pe + 6]);
  uint16_t optionalSize = llvm::support::endian::read16le(&file[pe + 20]);
  std::vector<uint8_t> mapped(0x8000, 0);
  std::copy(file.begin(), file.begin() + 0x200, mapped.begin());
  for (unsigned i = 0; i < sections; ++i) {
    const uint8_t *header = &file[pe + 24 + optionalSize + i * 40];
    uint32_t rva = llvm::support::endian::read32le(header + 12), size = llvm::support::endian::read32le(header + 16),
             offset = llvm::support::endian::read32le(header + 20);
    REQUIRE(rva + size <= mapped.size());
    std::copy(file.begin() + offset, file.begin() + offset + size, mapped.begin() + rva);
  }
  EcmaMetadata metadata = require(EcmaMetadata::fromPeImage(mapped, true));
  CHECK(metadata.methodFullName(MethodDefToken | 15) == "Demo.Shapes.Outer`1+Inner`1+Deepest.Leaf()");
  // The same bytes read as a file put the CLI header elsewhere.
  CHECK(errorOf(EcmaMetadata::fromPeImage(mapped, false)) != "(parsed)");
}

TEST_CASE("a PE image without metadata is refused with a reason") {
  std::vector<uint8_t> file = readFile(dataFile("Nested.dll"));
  REQUIRE(file.size() > 0x200);
  CHECK(errorOf(EcmaMetadata::fromPeImage({}, false)) == "not a PE image (no MZ/PE signatures)");
  std::vector<uint8_t> truncated(file.begin(), file.begin() + 0x100);
  CHECK(errorOf(EcmaMetadata::fromPeImage(truncated, false)) != "(parsed)");
  uint32_t pe = llvm::support::endian::read32le(&file[0x3c]);
  std::vector<uint8_t> native = file;
  bool pe32 = llvm::support::endian::read16le(&file[pe + 24]) == 0x10b;
  std::fill_n(native.begin() + pe + 24 + (pe32 ? 96 : 112) + 14 * 8, 8, 0); // the COM descriptor's RVA and size
  CHECK(errorOf(EcmaMetadata::fromPeImage(native, false)) == "the image has no CLI header (not a .NET assembly)");
  // Every prefix of the file: refused or parsed, never read past.
  for (size_t size = 0; size < file.size(); size += 7) {
    auto metadata = EcmaMetadata::fromPeImage(std::span(file).first(size), false);
    if (!metadata) llvm::consumeError(metadata.takeError());
  }
}

TEST_CASE("metadata claimed past the image is refused before its bytes are asked for (fuzz/findings/ecma-metadata-size-past-image)") {
  // A 2.7 KiB image whose CLI header claims 256 MiB of metadata: once, that
  // much was reserved and a 64 KiB piece asked for before the claim failed.
  struct CountingMemory : stackwalk::BufferMemory {
    mutable uint64_t asked = 0;
    bool read(uint64_t address, std::span<uint8_t> out) const override {
      asked += out.size();
      return BufferMemory::read(address, out);
    }
  } memory;
  std::vector<uint8_t> image = readFile(std::filesystem::path(STACKWALK_FINDINGS_DIR) / "ecma-metadata-size-past-image");
  REQUIRE(image.size() < 4096);
  memory.add(0, image);
  CHECK_THAT(errorOf(EcmaMetadata::fromPeImage(memory, 0, /*mapped=*/true)), Catch::Contains("outside the image or not readable"));
  CHECK(memory.asked < 4096);
}

TEST_CASE("names, nesting and generic parameters from hand-built tables") {
  MetadataBuilder b;
  uint32_t module = b.type("", "<Module>", 1);
  uint32_t outer = b.type("Ns", "Outer`1", 1);
  uint32_t run = b.method("Run", {0x20, 2, 0x01, 0x08, 0x0e}); // instance void (int32, string)
  uint32_t inner = b.type("", "Inner", 2); // no methods: the next types start at the same row
  uint32_t empty = b.type("", "Empty", 2);
  uint32_t last = b.type("Other", "Last", 2);
  uint32_t get = b.method("Get", {0x30, 1, 2, 0x01, 0x13, 0, 0x1e, 0}); // instance generic<1> void (!0, !!0)
  b.nest(inner, outer);
  b.nest(empty, outer);
  b.generic(outer, 0, "T");
  b.generic(get, 0, "M");
  EcmaMetadata metadata = b.parse();

  CHECK(metadata.typeFullName(module) == "<Module>");
  CHECK(metadata.typeFullName(inner) == "Ns.Outer`1+Inner");
  CHECK(metadata.methodTypeDefToken(run) == outer);
  CHECK(metadata.methodTypeDefToken(get) == last);
  CHECK(metadata.methodFullName(run) == "Ns.Outer`1.Run(Int32, System.String)");
  // Last has no generic parameter 0: SigFormat's spelling stands in.
  CHECK(metadata.methodFullName(get) == "Other.Last.Get[M](!0, M)");
  CHECK(metadata.methodParameters(get) == "(!0, M)");
  CHECK_FALSE(metadata.methodTypeDefToken(get + 1));
  CHECK(metadata.genericParameterNames(outer) == std::vector<std::string>{"T"});
  CHECK(metadata.genericParameterNames(inner) == std::vector<std::string>{});
  CHECK(metadata.rowCount(MetadataTable::NestedClass) == 2);
}

TEST_CASE("the assembly's informational version, through a MemberRef or a MethodDef constructor") {
  MetadataBuilder other;
  other.assembly("App");
  other.assemblyAttribute(other.constructorOf("System.Reflection", "AssemblyTitleAttribute"), stringArgument("App"));
  other.assemblyAttribute(other.constructorOf("System.Reflection", "AssemblyInformationalVersionAttribute"),
                          stringArgument("1.2.3-beta+abc"));
  CHECK(other.parse().assemblyInformationalVersion() == "1.2.3-beta+abc");

  // CoreLib defines the attribute itself: its constructor is a MethodDef.
  MetadataBuilder coreLib;
  coreLib.assembly("System.Private.CoreLib");
  coreLib.type("", "<Module>", 1);
  coreLib.type("System.Reflection", "AssemblyInformationalVersionAttribute", 1);
  coreLib.assemblyAttribute(coreLib.method(".ctor"), stringArgument("10.0.12-servicing.26422.108+0123abcd"));
  CHECK(coreLib.parse().assemblyInformationalVersion() == "10.0.12-servicing.26422.108+0123abcd");

  SECTION("a string that runs past its blob, or a value without the prolog, is no version") {
    MetadataBuilder b;
    b.assembly("App");
    b.assemblyAttribute(b.constructorOf("System.Reflection", "AssemblyInformationalVersionAttribute"),
                        {1, 0, 40, '1', '.', '0'});
    CHECK_FALSE(b.parse().assemblyInformationalVersion());
    MetadataBuilder unprefixed;
    unprefixed.assembly("App");
    std::vector<uint8_t> value = stringArgument("1.0");
    value[0] = 2;
    unprefixed.assemblyAttribute(unprefixed.constructorOf("System.Reflection", "AssemblyInformationalVersionAttribute"), value);
    CHECK_FALSE(unprefixed.parse().assemblyInformationalVersion());
  }
  SECTION("metadata without an Assembly row, or without the attribute, has none") {
    MetadataBuilder module;
    module.assemblyAttribute(module.constructorOf("System.Reflection", "AssemblyInformationalVersionAttribute"),
                             stringArgument("1.0"));
    CHECK_FALSE(module.parse().assemblyInformationalVersion());
    MetadataBuilder plain;
    plain.assembly("App");
    CHECK_FALSE(plain.parse().assemblyInformationalVersion());
  }
}

TEST_CASE("a method before every type's method list has no declaring type") {
  MetadataBuilder b;
  uint32_t orphan = b.method("Orphan");
  b.type("", "Late", 2);
  EcmaMetadata metadata = b.parse();
  CHECK_FALSE(metadata.methodTypeDefToken(orphan));
  CHECK_FALSE(metadata.methodFullName(orphan));
  CHECK(metadata.methodName(orphan) == "Orphan");
}

TEST_CASE("unoptimized (#-) metadata finds methods through MethodPtr") {
  MetadataBuilder b;
  b.tablesName = "#-";
  uint32_t first = b.type("", "First", 1);
  uint32_t second = b.type("", "Second", 2);
  uint32_t a = b.method("A"), c = b.method("C");
  // The list order is C (owned by First), then A (owned by Second).
  b.rows[MethodPtr] = {{c & 0xffffff}, {a & 0xffffff}};
  EcmaMetadata metadata = b.parse();
  CHECK(metadata.methodTypeDefToken(c) == first);
  CHECK(metadata.methodTypeDefToken(a) == second);
  b.rows[MethodPtr] = {{a & 0xffffff}};
  CHECK_FALSE(b.parse().methodTypeDefToken(c)); // no pointer leads to it
}

TEST_CASE("a NestedClass cycle or a dangling enclosing row gives no name") {
  MetadataBuilder b;
  uint32_t x = b.type("", "X", 1), y = b.type("", "Y", 1), self = b.type("", "Self", 1), lost = b.type("", "Lost", 1);
  b.nest(x, y);
  b.nest(y, x);
  b.nest(self, self);
  b.nest(lost, 0x99);
  EcmaMetadata metadata = b.parse();
  CHECK_FALSE(metadata.typeFullName(x));
  CHECK_FALSE(metadata.typeFullName(self));
  CHECK_FALSE(metadata.typeFullName(lost));
}

TEST_CASE("bad heap indexes and signatures give nullopt or a name without parameters") {
  MetadataBuilder b;
  b.type("", "T", 1);
  uint32_t bad = b.method("Bad", {0x00, 3, 0x01, 0x08}); // three parameters, one present
  uint32_t unknown = b.method("Unknown", {0x00, 1, 0x01, 0x45}); // not a type
  uint32_t spec = b.method("Spec", {0x00, 1, 0x01, 0x12, 0x02}); // a TypeSpec where a class goes
  uint32_t range = b.method("Range", {0x00, 1, 0x01, 0x12, 0x7d}); // TypeRef row 31 of 0
  uint32_t deep = b.method("Deep", [] {
    std::vector<uint8_t> sig{0, 0};
    sig.insert(sig.end(), 100, 0x0f); // pointer to pointer to ...
    sig.push_back(0x08);
    return sig;
  }());
  uint32_t noName = b.method("X");
  b.rows[MethodDef].back()[3] = 0xfff0; // past #Strings
  uint32_t noBlob = b.method("NoBlob");
  b.rows[MethodDef].back()[4] = 0xfff0; // past #Blob
  EcmaMetadata metadata = b.parse();
  for (uint32_t method : {bad, unknown, spec, range, deep, noBlob}) {
    CHECK_FALSE(metadata.methodParameters(method));
    CHECK(metadata.methodFullName(method) == metadata.methodFullName(method, EcmaMetadata::Parameters::Omit));
  }
  CHECK(metadata.methodFullName(bad) == "T.Bad");
  CHECK_FALSE(metadata.methodFullName(noName));
  CHECK_FALSE(metadata.methodName(noName));
}

TEST_CASE("broken roots and table streams are refused with a reason") {
  CHECK(errorOf(EcmaMetadata::parse({})) == "no metadata root (\"BSJB\" signature)");
  MetadataBuilder b;
  b.type("", "T", 1);
  std::vector<uint8_t> good = b.build();
  REQUIRE(errorOf(EcmaMetadata::parse(good)) == "(parsed)");

  // Every truncation, and every single-byte corruption of the root and the
  // table header, with every query on what still parses.
  for (size_t size = 0; size < good.size(); ++size) {
    auto metadata = EcmaMetadata::parse({good.begin(), good.begin() + size});
    if (metadata) queryEverything(*metadata);
    else llvm::consumeError(metadata.takeError());
  }
  for (size_t at = 0; at < good.size(); ++at)
    for (uint8_t value : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      std::vector<uint8_t> bytes = good;
      bytes[at] = value;
      auto metadata = EcmaMetadata::parse(std::move(bytes));
      if (metadata) queryEverything(*metadata);
      else llvm::consumeError(metadata.takeError());
    }

  SECTION("a stream past the end") {
    std::vector<uint8_t> bytes = good;
    bytes[35] = 0x10; // the first stream header's offset
    CHECK(errorOf(EcmaMetadata::parse(bytes)) == "stream #~ runs past the end of the metadata");
  }
  SECTION("a version string past the end") {
    std::vector<uint8_t> bytes = good;
    bytes[14] = 0x10;
    CHECK(errorOf(EcmaMetadata::parse(bytes)) == "the metadata version string runs past the end");
  }
  SECTION("no table stream") {
    CHECK(errorOf(EcmaMetadata::parse(root({{"#Strings", {0}}}))) == "the metadata has no table stream (#~ or #-)");
  }
  SECTION("row counts beyond a token's 24 bits, or beyond the stream") {
    CHECK(errorOf(EcmaMetadata::parse(root({{"#~", tableStream({{TypeDef, 0x1000000}}, {})}}))) ==
          "table 0x2 claims 16777216 rows");
    CHECK(errorOf(EcmaMetadata::parse(root({{"#~", tableStream({{TypeDef, 0xffffff}}, {})}}))) ==
          "table 0x2 (16777215 rows) runs past the table stream");
  }
}

TEST_CASE("column widths follow the row counts, heap flags and coded index rules") {
  auto parseWith = [](std::map<uint8_t, uint32_t> counts, uint8_t heapSizes = 0) {
    std::vector<uint8_t> data(2 << 20, 0); // room for the largest tables below
    return require(EcmaMetadata::parse(root({{"#~", tableStream(counts, data, heapSizes)}})));
  };
  EcmaMetadata small = parseWith({{TypeDef, 1}, {MethodDef, 1}});
  CHECK(small.table(TypeDef).rowSize == 14);
  CHECK(small.table(MethodDef).rowSize == 14);
  CHECK(small.table(Module).rowSize == 10);
  CHECK(small.table(MethodDef).offset == small.table(TypeDef).offset + 14);

  // HasCustomAttribute has 5 tag bits: 2^11 TypeRefs widen it; TypeDefOrRef
  // (2 bits) stays narrow until 2^14.
  EcmaMetadata typeRefs = parseWith({{TypeRef, 2048}, {CustomAttribute, 1}, {GenericParamConstraint, 1}});
  CHECK(typeRefs.table(CustomAttribute).columnSize[0] == 4);
  CHECK(typeRefs.table(GenericParamConstraint).columnSize[1] == 2);
  CHECK(parseWith({{TypeRef, 2047}, {CustomAttribute, 1}}).table(CustomAttribute).columnSize[0] == 2);
  CHECK(parseWith({{TypeRef, 16384}, {GenericParamConstraint, 1}}).table(GenericParamConstraint).columnSize[1] == 4);

  // 65536 methods widen TypeDef.MethodList; large heaps widen their columns.
  EcmaMetadata methods = parseWith({{TypeDef, 1}, {MethodDef, 65536}});
  CHECK(methods.table(TypeDef).columnSize[5] == 4);
  CHECK(methods.table(TypeDef).rowSize == 16);
  EcmaMetadata heaps = parseWith({{Module, 1}, {MethodDef, 1}}, 0x07);
  CHECK(heaps.table(Module).rowSize == 2 + 4 + 3 * 4);
  CHECK(heaps.table(MethodDef).rowSize == 4 + 2 + 2 + 4 + 4 + 2);
  // A MethodPtr table as large widens MethodList too, as in unoptimized metadata.
  CHECK(parseWith({{TypeDef, 1}, {MethodPtr, 65536}}).table(TypeDef).columnSize[5] == 4);
  // A minimal ENC delta (a #JTD stream) has every index four bytes wide.
  std::vector<uint8_t> row(20, 0);
  EcmaMetadata delta = require(EcmaMetadata::parse(root({{"#~", tableStream({{MethodDef, 1}}, row)}, {"#JTD", {}}})));
  CHECK(delta.table(MethodDef).rowSize == 4 + 2 + 2 + 4 + 4 + 4);
  CHECK(delta.table(200).rows == 0);
}

TEST_CASE("corrupted bytes of a real assembly's metadata never crash a query") {
  std::vector<uint8_t> file = readFile(dataFile("Nested.dll"));
  auto start = std::search(file.begin(), file.end(), std::begin("BSJB"), std::end("BSJB") - 1);
  REQUIRE(start != file.end());
  std::vector<uint8_t> good(start, file.end());
  std::mt19937 random(12345);
  size_t queried = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes = good;
    // Half the rounds aim at the root, stream headers and tables (the first
    // 0x400 bytes), the rest anywhere, heaps included.
    size_t span = round % 2 ? bytes.size() : std::min<size_t>(bytes.size(), 0x400);
    for (int flips = 0; flips < 1 + round % 8; ++flips) bytes[random() % span] = uint8_t(random());
    auto metadata = EcmaMetadata::parse(std::move(bytes));
    if (metadata) queryEverything(*metadata), ++queried;
    else llvm::consumeError(metadata.takeError());
  }
  CHECK(queried > 1000);
}

TEST_CASE("the installed runtime's assemblies name every method") {
  const std::filesystem::path shared = "/usr/share/dotnet/shared/Microsoft.NETCore.App";
  std::error_code error;
  if (!std::filesystem::is_directory(shared, error)) {
    WARN("skipped: no .NET runtime at " << shared.string());
    return;
  }
  for (const auto &version : std::filesystem::directory_iterator(shared, error)) {
    for (const char *name : {"System.Private.CoreLib.dll", "System.Console.dll"}) {
      auto path = version.path() / name;
      if (!std::filesystem::exists(path, error)) continue;
      INFO(path.string());
      EcmaMetadata parsed = require(EcmaMetadata::fromPeImage(readFile(path), false));
      auto metadata = &parsed;
      size_t named = 0, methods = metadata->rowCount(MetadataTable::MethodDef);
      bool concat = false;
      for (uint32_t row = 1; row <= methods; ++row) {
        auto full = metadata->methodFullName(MethodDefToken | row);
        named += full && full->ends_with(")");
        concat = concat || full == "System.String.Concat(System.String, System.String)";
      }
      CHECK(methods > 100);
      CHECK(named == methods);
      CHECK(concat == (std::string(name) == "System.Private.CoreLib.dll"));
    }
  }
}
