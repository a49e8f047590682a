// Type and method names as ClrMD prints them, on hand-built runtime types over
// the metadata of test/data/Nested.dll (Nested.cs): instantiations (the
// type's own dictionary being the last of several), arrays, byrefs, generic
// parameters, an instantiated generic method with its substituted signature;
// and runtime types that loop or lie give a reason, not a name.
#include "stackwalk/frames/MethodNames.h"
#include "stackwalk/frames/TypeNames.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

using namespace stackwalk;
using namespace stackwalk::frames;

namespace {

constexpr const char *Json = R"({
  "version": 1, "baseline": "empty", "contracts": {"RuntimeTypeSystem": 1, "Loader": 1},
  "types": {
    "MethodTable": {"MTFlags": 0, "MTFlags2": 8, "Module": 24, "EEClassOrCanonMT": 40, "PerInstInfo": 48},
    "GenericsDictInfo": {"NumDicts": 4, "NumTypeArgs": 6},
    "EEClass": {"InternalCorElementType": 48},
    "ArrayClass": {"Rank": 72},
    "TypeDesc": {"TypeAndFlags": 0},
    "ParamTypeDesc": {"TypeArg": 16},
    "TypeVarTypeDesc": {"Module": 16, "Token": 40},
    "Module": {"Path": 200, "PEAssembly": 216},
    "PEAssembly": {"PEImage": 8},
    "PEImage": {"LoadedImageLayout": 16},
    "PEImageLayout": {"Base": 8},
    "MethodDesc": {"ChunkIndex": 2, "Flags": 6, "Flags3AndTokenRemainder": 0},
    "MethodDescChunk": {"!": 24, "MethodTable": 0, "FlagsAndTokenRange": 18},
    "InstantiatedMethodDesc": {"PerInstInfo": 24, "Flags2": 32, "NumGenericArgs": 34},
    "StoredSigMethodDesc": {"Sig": 16, "cSig": 24, "ExtendedFlags": 28},
    "DynamicMethodDesc": {"MethodName": 32}
  },
  "globals": {"MethodDescAlignment": 8, "MethodDescTokenRemainderBitCount": 12}
})";

// Nested.dll's file, flat, at ImageBase; its Module and the Loader chain to it.
constexpr uint64_t ImageBase = 0x400000, ModuleAt = 0x1000;
// MethodTables, dictionaries and TypeDescs (a TypeDesc handle has bit 1 set).
constexpr uint64_t PointMT = 0x2000, PointArrayMT = 0x2100, OuterMT = 0x2200, InnerMT = 0x2300;
constexpr uint64_t OuterDictInfo = 0x2400, InnerDictInfo = 0x2500, OuterDict = 0x2600, ParentDict = 0x2700, InnerDict = 0x2800;
constexpr uint64_t ParameterU = 0x2900, PointByRef = 0x2a00, SelfByRef = 0x2b00, BadArrayMT = 0x2c00, BadArrayClass = 0x2d00;
constexpr uint64_t Chunk = 0x3000, Method = Chunk + 24, MethodDict = 0x3100;
// A compiled expression's DynamicMethodDesc (LCG) and an IL stub, in a second chunk.
constexpr uint64_t DynamicChunk = 0x3200, Lambda = DynamicChunk + 24, Stub = DynamicChunk + 64;
constexpr uint64_t LambdaName = 0x3300, StubName = 0x3320, LambdaSig = 0x3340;
// A reverse P/Invoke stub whose stored signature has two void*, each naming a true
// primitive's MethodTable whose EEClass the dump lacks (a normal or triage dump).
constexpr uint64_t ReverseStub = DynamicChunk + 104, ReverseName = 0x3380, ReverseSig = 0x33c0, VoidMT = 0x2e00;
constexpr uint32_t TruePrimitive = 0x00070000;
constexpr uint32_t ValueType = 0x00040000, SzArray = 0x800A0000, MdArray = 0x80080000, GenericInst = 0x10;

std::vector<uint8_t> nestedDll() {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "data" / "Nested.dll", std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Memory {
public:
  void put64(uint64_t at, uint64_t value) { put(at, &value, 8); }
  void put32(uint64_t at, uint32_t value) { put(at, &value, 4); }
  void put16(uint64_t at, uint16_t value) { put(at, &value, 2); }
  void put8(uint64_t at, uint8_t value) { put(at, &value, 1); }
  std::vector<uint8_t> page = std::vector<uint8_t>(0x3000);

private:
  void put(uint64_t at, const void *value, size_t size) { std::memcpy(page.data() + (at - 0x1000), value, size); }
};

// A MethodTable of the module with the TypeDef `token` and the given flags.
void methodTable(Memory &m, uint64_t at, uint32_t flags, uint32_t token, uint64_t perInstInfo = 0) {
  m.put32(at + 0, flags);
  m.put32(at + 8, (token & 0xffffff) << 8);
  m.put64(at + 24, ModuleAt);
  m.put64(at + 48, perInstInfo);
}

// The dictionaries of a generic type: GenericsDictInfo, then one pointer per dictionary.
void dictionaries(Memory &m, uint64_t info, std::vector<uint64_t> dicts, uint16_t typeArguments) {
  m.put16(info + 4, uint16_t(dicts.size()));
  m.put16(info + 6, typeArguments);
  for (size_t i = 0; i < dicts.size(); ++i) m.put64(info + 8 + 8 * i, dicts[i]);
}

struct Fixture {
  std::unique_ptr<Target> target;
  ContractDescriptor descriptor;
  std::unique_ptr<RuntimeData> data;
  EcmaMetadata metadata;

  uint32_t typeToken(const std::string &name) const {
    for (uint32_t row = 1; row <= metadata.rowCount(MetadataTable::TypeDef); ++row)
      if (metadata.typeFullName(0x02000000 | row) == name) return 0x02000000 | row;
    FAIL("no type " << name);
    return 0;
  }
  uint32_t genericParameterToken(const std::string &name) const {
    for (uint32_t row = 1; row <= metadata.rowCount(MetadataTable::GenericParam); ++row)
      if (metadata.genericParameterName(0x2a000000 | row) == name) return 0x2a000000 | row;
    FAIL("no generic parameter " << name);
    return 0;
  }
  uint32_t methodToken(const std::string &name) const {
    for (uint32_t row = 1; row <= metadata.rowCount(MetadataTable::MethodDef); ++row)
      if (metadata.methodName(0x06000000 | row) == name) return 0x06000000 | row;
    FAIL("no method " << name);
    return 0;
  }
};

Fixture fixture() {
  std::vector<uint8_t> image = nestedDll();
  REQUIRE(image.size() > 0x200);
  auto parsedMetadata = EcmaMetadata::fromPeImage(image, false);
  REQUIRE(bool(parsedMetadata));
  auto parsed = ContractDescriptor::parse(Json, {}, 8);
  REQUIRE(bool(parsed));
  Fixture f{nullptr, std::move(*parsed), nullptr, std::move(*parsedMetadata)};

  Memory m;
  m.put64(ModuleAt + 216, ModuleAt + 0x100); // PEAssembly
  m.put64(ModuleAt + 0x100 + 8, ModuleAt + 0x180); // PEImage
  m.put64(ModuleAt + 0x180 + 16, ModuleAt + 0x1c0); // its loaded layout
  m.put64(ModuleAt + 0x1c0 + 8, ImageBase);
  methodTable(m, PointMT, ValueType, f.typeToken("Demo.Shapes.Point"));
  methodTable(m, PointArrayMT, SzArray | 4, f.typeToken("Demo.Shapes.Point"), PointMT);
  // Outer<Point[]>: one dictionary.
  methodTable(m, OuterMT, GenericInst, f.typeToken("Demo.Shapes.Outer`1"), OuterDictInfo + 8);
  dictionaries(m, OuterDictInfo, {OuterDict}, 1);
  m.put64(OuterDict, PointArrayMT);
  // Outer<Point>.Inner<U>: its own dictionary is the last; the first is a decoy.
  methodTable(m, InnerMT, GenericInst, f.typeToken("Demo.Shapes.Outer`1+Inner`1"), InnerDictInfo + 8);
  dictionaries(m, InnerDictInfo, {ParentDict, InnerDict}, 2);
  m.put64(ParentDict, PointArrayMT);
  m.put64(InnerDict, PointMT);
  m.put64(InnerDict + 8, ParameterU | 2);
  m.put32(ParameterU, 0x13); // ELEMENT_TYPE_VAR
  m.put64(ParameterU + 16, ModuleAt);
  m.put32(ParameterU + 40, f.genericParameterToken("U"));
  m.put32(PointByRef, 0x10); // ELEMENT_TYPE_BYREF
  m.put64(PointByRef + 16, PointMT);
  m.put32(SelfByRef, 0x10);
  m.put64(SelfByRef + 16, SelfByRef | 2);
  methodTable(m, BadArrayMT, MdArray | 4, f.typeToken("Demo.Shapes.Point"), PointMT);
  m.put64(BadArrayMT + 40, BadArrayClass); // an ArrayClass of rank 0
  // Inner's Method<V> instantiated over Point[]: chunk index 0, unshared (Flags2 kind 2).
  uint32_t token = f.methodToken("Method");
  m.put64(Chunk, InnerMT);
  m.put16(Chunk + 18, uint16_t((token & 0xffffff) >> 12));
  m.put16(Method, uint16_t(token & 0xfff));
  m.put16(Method + 6, 5); // mcInstantiated
  m.put64(Method + 24, MethodDict);
  m.put16(Method + 32, 2);
  m.put16(Method + 34, 1);
  m.put64(MethodDict, PointArrayMT);
  // Their chunk's MethodTable is one of the module's; names and signatures are their own:
  // lambda_method1(Point, Int32) returning Void: DEFAULT, 2 parameters, VOID, then
  // ELEMENT_TYPE_INTERNAL and the TypeHandle, then I4.
  m.put64(DynamicChunk, PointMT);
  for (uint64_t md : {Lambda, Stub}) {
    m.put8(md + 2, uint8_t((md - DynamicChunk - 24) / 8)); // ChunkIndex
    m.put16(md + 6, 7);                                     // mcDynamic
  }
  m.put64(Lambda + 32, LambdaName);
  m.put32(Lambda + 28, 0x4000); // IsLCGMethod
  m.put64(Lambda + 16, LambdaSig);
  m.put32(Lambda + 24, 13);
  m.put64(Stub + 32, StubName);
  m.put32(Stub + 28, 0x8000); // IsILStub
  const std::string lambda = "lambda_method1", stub = "IL_STUB_PInvoke";
  for (size_t i = 0; i < lambda.size(); ++i) m.put8(LambdaName + i, uint8_t(lambda[i]));
  for (size_t i = 0; i < stub.size(); ++i) m.put8(StubName + i, uint8_t(stub[i]));
  const uint8_t signature[] = {0x00, 0x02, 0x01, 0x21};
  for (size_t i = 0; i < sizeof signature; ++i) m.put8(LambdaSig + i, signature[i]);
  m.put64(LambdaSig + 4, PointMT);
  m.put8(LambdaSig + 12, 0x08);
  methodTable(m, VoidMT, TruePrimitive, f.typeToken("Demo.Shapes.Point"));
  m.put64(VoidMT + 40, 0x700000); // EEClassOrCanonMT: not in the dump
  m.put8(ReverseStub + 2, uint8_t((ReverseStub - DynamicChunk - 24) / 8));
  m.put16(ReverseStub + 6, 7);
  m.put64(ReverseStub + 32, ReverseName);
  m.put32(ReverseStub + 28, 0x8000); // IsILStub
  m.put64(ReverseStub + 16, ReverseSig);
  m.put32(ReverseStub + 24, 23);
  const std::string reverse = "IL_STUB_ReversePInvoke";
  for (size_t i = 0; i < reverse.size(); ++i) m.put8(ReverseName + i, uint8_t(reverse[i]));
  // DEFAULT, 2 parameters, VOID, then twice PTR, ELEMENT_TYPE_INTERNAL and the TypeHandle.
  const uint8_t reverseSignature[] = {0x00, 0x02, 0x01, 0x0f, 0x21};
  for (size_t i = 0; i < sizeof reverseSignature; ++i) m.put8(ReverseSig + i, reverseSignature[i]);
  m.put64(ReverseSig + 5, VoidMT);
  m.put8(ReverseSig + 13, 0x0f);
  m.put8(ReverseSig + 14, 0x21);
  m.put64(ReverseSig + 15, VoidMT);

  auto memory = std::make_unique<BufferMemory>();
  memory->add(0x1000, std::move(m.page));
  memory->add(ImageBase, std::move(image));
  f.target = std::make_unique<Target>(Arch::X86_64, OS::Linux, "test", std::move(memory));
  f.data = std::make_unique<RuntimeData>(*f.target, f.descriptor);
  return f;
}

template <typename T> T require(llvm::Expected<T> value) {
  if (!value) FAIL(llvm::toString(value.takeError()));
  return std::move(*value);
}

std::string errorOf(llvm::Expected<std::string> value) {
  return value ? "(named " + *value + ")" : llvm::toString(value.takeError());
}

} // namespace

TEST_CASE("type names in TypeString's and SigFormat's spellings") {
  Fixture f = fixture();
  ManagedModules modules(*f.data);
  TypeNames types(*f.data, modules);
  CHECK(require(types.reflectionName(PointMT)) == "Demo.Shapes.Point");
  CHECK(require(types.reflectionName(OuterMT)) == "Demo.Shapes.Outer`1[[Demo.Shapes.Point[], Nested]]");
  CHECK(require(types.reflectionName(InnerMT)) == "Demo.Shapes.Outer`1+Inner`1[[Demo.Shapes.Point, Nested],U]");
  CHECK(require(types.reflectionName(PointByRef | 2)) == "Demo.Shapes.Point&");
  CHECK(require(types.signatureName(OuterMT)) == "Demo.Shapes.Outer`1<Demo.Shapes.Point[]>");
  CHECK(require(types.signatureName(InnerMT)) == "Inner`1<Demo.Shapes.Point,U>");
  CHECK(require(types.signatureName(PointByRef | 2)) == "Demo.Shapes.Point ByRef");
}

TEST_CASE("an instantiated generic method is named with both instantiations, its signature substituted") {
  Fixture f = fixture();
  MethodNames names(*f.data);
  ManagedMethod method = require(names.describe(Method));
  CHECK(method.name == "Demo.Shapes.Outer`1+Inner`1[[Demo.Shapes.Point, Nested],U].Method[[Demo.Shapes.Point[], Nested]]"
                       "(Int32, System.String, Demo.Shapes.Point, U, Demo.Shapes.Point[], Int32 ByRef, Int32[], Int32[,], "
                       "System.Collections.Generic.List`1<Demo.Shapes.Point>, "
                       "System.Collections.Generic.Dictionary`2<System.String,Int32>)");
}

TEST_CASE("methods without metadata: DynamicClass and ILStubClass, with the signature the runtime stored") {
  Fixture f = fixture();
  MethodNames names(*f.data);
  // The stored signature's ELEMENT_TYPE_INTERNAL TypeHandle is named as SigFormat names it:
  // its TypeDef's namespace and name.
  CHECK(require(names.describe(Lambda)).name == "DynamicClass.lambda_method1(Demo.Shapes.Point, Int32)");
  // No stored signature (cSig 0): the name alone.
  CHECK(require(names.describe(Stub)).name == "ILStubClass.IL_STUB_PInvoke");
  // A type named by its module and token, without the EEClass a true primitive's
  // element type is read from (ClrMD: IL_STUB_ReversePInvoke(System.Void*, System.Void*)).
  CHECK(require(names.describe(ReverseStub)).name ==
        "ILStubClass.IL_STUB_ReversePInvoke(Demo.Shapes.Point*, Demo.Shapes.Point*)");
}

TEST_CASE("runtime types that loop or lie give a reason") {
  Fixture f = fixture();
  ManagedModules modules(*f.data);
  TypeNames types(*f.data, modules);
  CHECK(errorOf(types.reflectionName(SelfByRef | 2)).find("nests more than 16 deep") != std::string::npos);
  CHECK(errorOf(types.signatureName(BadArrayMT)).find("has rank 0") != std::string::npos);
  CHECK(errorOf(types.reflectionName(0x9000)).find("not in the dump") != std::string::npos);
  auto tooMany = types.typeHandles(OuterDict, 1000);
  REQUIRE(!tooMany);
  CHECK(llvm::toString(tooMany.takeError()) == "1000 type arguments is implausible");
}
