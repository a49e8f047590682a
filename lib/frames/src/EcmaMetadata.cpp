#include "stackwalk/frames/EcmaMetadata.h"

#include "stackwalk/core/Fail.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <array>
#include <cstring>

using namespace llvm;

namespace stackwalk::frames {
namespace {

// Little-endian reads that fail instead of running past the end.
class ByteView {
public:
  explicit ByteView(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T> std::optional<T> get(size_t offset) const {
    if (!contains(offset, sizeof(T))) return std::nullopt;
    return support::endian::read<T, llvm::endianness::little>(bytes_.data() + offset);
  }
  bool contains(size_t offset, size_t size) const { return offset <= bytes_.size() && size <= bytes_.size() - offset; }

private:
  std::span<const uint8_t> bytes_;
};

// Column kinds of the schema (II.22). Zero ends a row, so that the table
// below can leave its unused cells out.
enum Kind : uint8_t {
  End = 0, U16, U32, Str, Guid, Blob,
  Coded = 0x10, // + CodedKind
  Index = 0x40, // + table: a row number in that table
  List = 0x80,  // + table: the first row of a run, which may go through a Ptr table
};
enum CodedKind : uint8_t {
  TypeDefOrRef, HasConstant, HasCustomAttribute, HasFieldMarshal, HasDeclSecurity, MemberRefParent,
  HasSemantics, MethodDefOrRef, MemberForwarded, Implementation, CustomAttributeType, ResolutionScope,
  TypeOrMethodDef,
};
constexpr uint8_t NoTable = 0xff; // a tag value the coded index leaves unused

// A coded index (II.24.2.6): the low tagBits pick the table, the rest is the row.
struct CodedIndex {
  uint8_t tagBits;
  std::array<uint8_t, 22> tables;
  uint8_t count;
};
constexpr std::array<CodedIndex, 13> codedIndexes{{
    {2, {0x02, 0x01, 0x1b}, 3},
    {2, {0x04, 0x08, 0x17}, 3},
    {5, {0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0a, 0x00, 0x0e, 0x17, 0x14,
         0x11, 0x1a, 0x1b, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2a, 0x2c, 0x2b}, 22},
    {1, {0x04, 0x08}, 2},
    {2, {0x02, 0x06, 0x20}, 3},
    {3, {0x02, 0x01, 0x1a, 0x06, 0x1b}, 5},
    {1, {0x14, 0x17}, 2},
    {1, {0x06, 0x0a}, 2},
    {1, {0x04, 0x06}, 2},
    {2, {0x26, 0x23, 0x27}, 3},
    {3, {NoTable, NoTable, 0x06, 0x0a, NoTable}, 5},
    {2, {0x00, 0x1a, 0x23, 0x01}, 4},
    {1, {0x02, 0x06}, 2},
}};

// A coded index's value as a token (table << 24 | row); nullopt for a tag the
// coded index leaves unused.
std::optional<uint32_t> codedToken(CodedKind kind, uint32_t value) {
  const CodedIndex &coded = codedIndexes[kind];
  uint32_t tag = value & ((1u << coded.tagBits) - 1);
  if (tag >= coded.count || coded.tables[tag] == NoTable) return std::nullopt;
  return uint32_t(coded.tables[tag]) << 24 | value >> coded.tagBits;
}

// II.23.2: a compressed unsigned integer, 1, 2 or 4 bytes, big-endian, its
// length in the top bits: the value and the bytes it takes.
struct Compressed {
  uint32_t value;
  size_t size;
};
std::optional<Compressed> compressedUnsigned(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return std::nullopt;
  uint8_t first = bytes[0];
  size_t size = (first & 0x80) == 0 ? 1 : (first & 0xc0) == 0x80 ? 2 : (first & 0xe0) == 0xc0 ? 4 : 0;
  if (size == 0 || bytes.size() < size) return std::nullopt;
  uint32_t value = first & (size == 1 ? 0x7f : size == 2 ? 0x3f : 0x1f);
  for (size_t i = 1; i < size; ++i) value = value << 8 | bytes[i];
  return Compressed{value, size};
}

constexpr uint8_t C(CodedKind kind) { return uint8_t(Coded + unsigned(kind)); }
constexpr uint8_t I(uint8_t table) { return Index + table; }
constexpr uint8_t L(uint8_t table) { return List + table; }

// Every table up to GenericParamConstraint: a table's place in the stream
// depends on the row sizes of all the tables before it.
constexpr size_t SchemaTables = 0x2d;
constexpr std::array<std::array<uint8_t, 9>, SchemaTables> schema{{
    {U16, Str, Guid, Guid, Guid},                        // 0x00 Module
    {C(ResolutionScope), Str, Str},                      // 0x01 TypeRef
    {U32, Str, Str, C(TypeDefOrRef), L(0x04), L(0x06)},  // 0x02 TypeDef
    {I(0x04)},                                           // 0x03 FieldPtr
    {U16, Str, Blob},                                    // 0x04 Field
    {I(0x06)},                                           // 0x05 MethodPtr
    {U32, U16, U16, Str, Blob, L(0x08)},                 // 0x06 MethodDef
    {I(0x08)},                                           // 0x07 ParamPtr
    {U16, U16, Str},                                     // 0x08 Param
    {I(0x02), C(TypeDefOrRef)},                          // 0x09 InterfaceImpl
    {C(MemberRefParent), Str, Blob},                     // 0x0a MemberRef
    {U16, C(HasConstant), Blob},                         // 0x0b Constant (type byte + padding)
    {C(HasCustomAttribute), C(CustomAttributeType), Blob}, // 0x0c CustomAttribute
    {C(HasFieldMarshal), Blob},                          // 0x0d FieldMarshal
    {U16, C(HasDeclSecurity), Blob},                     // 0x0e DeclSecurity
    {U16, U32, I(0x02)},                                 // 0x0f ClassLayout
    {U32, I(0x04)},                                      // 0x10 FieldLayout
    {Blob},                                              // 0x11 StandAloneSig
    {I(0x02), L(0x14)},                                  // 0x12 EventMap
    {I(0x14)},                                           // 0x13 EventPtr
    {U16, Str, C(TypeDefOrRef)},                         // 0x14 Event
    {I(0x02), L(0x17)},                                  // 0x15 PropertyMap
    {I(0x17)},                                           // 0x16 PropertyPtr
    {U16, Str, Blob},                                    // 0x17 Property
    {U16, I(0x06), C(HasSemantics)},                     // 0x18 MethodSemantics
    {I(0x02), C(MethodDefOrRef), C(MethodDefOrRef)},     // 0x19 MethodImpl
    {Str},                                               // 0x1a ModuleRef
    {Blob},                                              // 0x1b TypeSpec
    {U16, C(MemberForwarded), Str, I(0x1a)},             // 0x1c ImplMap
    {U32, I(0x04)},                                      // 0x1d FieldRVA
    {U32, U32},                                          // 0x1e EncLog
    {U32},                                               // 0x1f EncMap
    {U32, U16, U16, U16, U16, U32, Blob, Str, Str},      // 0x20 Assembly
    {U32},                                               // 0x21 AssemblyProcessor
    {U32, U32, U32},                                     // 0x22 AssemblyOS
    {U16, U16, U16, U16, U32, Blob, Str, Str, Blob},     // 0x23 AssemblyRef
    {U32, I(0x23)},                                      // 0x24 AssemblyRefProcessor
    {U32, U32, U32, I(0x23)},                            // 0x25 AssemblyRefOS
    {U32, Str, Blob},                                    // 0x26 File
    {U32, U32, Str, Str, C(Implementation)},             // 0x27 ExportedType
    {U32, U32, Str, C(Implementation)},                  // 0x28 ManifestResource
    {I(0x02), I(0x02)},                                  // 0x29 NestedClass
    {U16, U16, C(TypeOrMethodDef), Str},                 // 0x2a GenericParam
    {C(MethodDefOrRef), Blob},                           // 0x2b MethodSpec
    {I(0x2a), C(TypeDefOrRef)},                          // 0x2c GenericParamConstraint
}};

// The Ptr table that a List column goes through in unoptimized (#-) metadata.
constexpr uint8_t pointerTableOf(uint8_t table) {
  switch (table) {
  case 0x04: return 0x03;
  case 0x06: return 0x05;
  case 0x08: return 0x07;
  case 0x14: return 0x13;
  case 0x17: return 0x16;
  default: return NoTable;
  }
}

// Tokens carry 24 bits of row number.
constexpr uint32_t MaxRows = 0xffffff;
constexpr uint8_t HeapStrings4 = 0x01, HeapGuids4 = 0x02, HeapBlobs4 = 0x04, HeapExtraData = 0x40;
// Columns of the tables read here.
enum : unsigned { TypeDefName = 1, TypeDefNamespace = 2, TypeDefMethodList = 5 };
enum : unsigned { TypeRefName = 1, TypeRefNamespace = 2 };
enum : unsigned { MethodDefName = 3, MethodDefSignature = 4 };
enum : unsigned { NestedClassNested = 0, NestedClassEnclosing = 1 };
enum : unsigned { GenericParamNumber = 0, GenericParamOwner = 2, GenericParamName = 3 };
enum : unsigned { AttributeParent = 0, AttributeConstructor = 1, AttributeValue = 2 };
enum : unsigned { MemberRefClass = 0 };
enum : unsigned { AssemblyName = 7 };
// Deep enough for any real nesting or signature, shallow enough for the stack.
constexpr unsigned MaxNesting = 64;
constexpr size_t MaxNameLength = 16384;

constexpr uint8_t tableOf(uint32_t token) { return uint8_t(token >> 24); }
constexpr uint32_t rowOf(uint32_t token) { return token & 0xffffff; }
constexpr uint32_t token(MetadataTable table, uint32_t row) { return uint32_t(table) << 24 | row; }
constexpr uint8_t number(MetadataTable table) { return uint8_t(table); }

} // namespace

Expected<EcmaMetadata> EcmaMetadata::parse(std::vector<uint8_t> bytes) {
  EcmaMetadata metadata;
  metadata.owned_ = std::move(bytes);
  metadata.bytes_ = metadata.owned_; // a moved vector keeps its buffer: the view stays right
  if (Error err = metadata.parseRoot()) return err;
  return metadata;
}

Expected<EcmaMetadata> EcmaMetadata::parseInPlace(std::span<const uint8_t> bytes) {
  EcmaMetadata metadata;
  metadata.bytes_ = bytes;
  if (Error err = metadata.parseRoot()) return err;
  return metadata;
}

// II.24.2.1 metadata root, then II.24.2.2 stream headers.
Error EcmaMetadata::parseRoot() {
  ByteView view(bytes_);
  if (view.get<uint32_t>(0) != 0x424a5342u) return fail("no metadata root (\"BSJB\" signature)");
  auto versionLength = view.get<uint32_t>(12);
  if (!versionLength || !view.contains(16, *versionLength)) return fail("the metadata version string runs past the end");
  const char *versionText = reinterpret_cast<const char *>(bytes_.data() + 16);
  version_.assign(versionText, strnlen(versionText, *versionLength));
  size_t at = 16 + size_t(*versionLength);
  auto streams = view.get<uint16_t>(at + 2);
  if (!streams) return fail("the metadata root is truncated before its stream count");
  at += 4;
  std::optional<Heap> tables;
  for (unsigned i = 0; i < *streams; ++i) {
    auto offset = view.get<uint32_t>(at), size = view.get<uint32_t>(at + 4);
    if (!offset || !size) return fail("stream header " + Twine(i) + " is truncated");
    at += 8;
    // The name is at most 32 bytes with its NUL, padded to 4.
    size_t nameEnd = at;
    while (nameEnd < bytes_.size() && nameEnd - at < 31 && bytes_[nameEnd] != 0) ++nameEnd;
    if (nameEnd >= bytes_.size() || bytes_[nameEnd] != 0) return fail("stream header " + Twine(i) + " has no terminated name");
    std::string name(reinterpret_cast<const char *>(bytes_.data() + at), nameEnd - at);
    at += (nameEnd - at + 4) & ~size_t(3);
    if (!view.contains(*offset, *size)) return fail("stream " + name + " runs past the end of the metadata");
    Heap heap{*offset, *size};
    if (name == "#~" || name == "#-") tables = heap;
    else if (name == "#Strings") strings_ = heap;
    else if (name == "#Blob") blobs_ = heap;
    else if (name == "#JTD") allIndexesLarge_ = true;
  }
  if (!tables) return fail("the metadata has no table stream (#~ or #-)");
  return parseTables(*tables);
}

// II.24.2.6: the #~ header, the row counts of the tables present, then the
// tables in order, each row as wide as its columns' index sizes.
Error EcmaMetadata::parseTables(Heap stream) {
  ByteView view(std::span<const uint8_t>(bytes_).subspan(stream.offset, stream.size));
  auto heapSizes = view.get<uint8_t>(6);
  auto valid = view.get<uint64_t>(8);
  if (!heapSizes || !valid) return fail("the table stream header is truncated");
  largeStrings_ = allIndexesLarge_ || (*heapSizes & HeapStrings4);
  largeGuids_ = allIndexesLarge_ || (*heapSizes & HeapGuids4);
  largeBlobs_ = allIndexesLarge_ || (*heapSizes & HeapBlobs4);
  size_t at = 24;
  for (unsigned t = 0; t < 64; ++t) {
    if (!(*valid >> t & 1)) continue;
    auto rows = view.get<uint32_t>(at);
    if (!rows) return fail("the table row counts are truncated");
    if (*rows > MaxRows) return fail("table 0x" + Twine::utohexstr(t) + " claims " + Twine(*rows) + " rows");
    tables_[t].rows = *rows;
    at += 4;
  }
  // Unoptimized metadata written with this flag has one more word here.
  if (*heapSizes & HeapExtraData) at += 4;

  auto indexSize = [&](uint8_t table) -> uint8_t { return allIndexesLarge_ || tables_[table].rows > 0xffff ? 4 : 2; };
  auto columnSize = [&](uint8_t kind) -> uint8_t {
    if (kind >= List) {
      uint8_t pointer = pointerTableOf(kind - List);
      return std::max(indexSize(kind - List), pointer == NoTable ? uint8_t(2) : indexSize(pointer));
    }
    if (kind >= Index) return indexSize(kind - Index);
    if (kind >= Coded) {
      const CodedIndex &coded = codedIndexes[kind - Coded];
      uint32_t most = 0;
      for (unsigned i = 0; i < coded.count; ++i)
        if (coded.tables[i] != NoTable) most = std::max(most, tables_[coded.tables[i]].rows);
      return allIndexesLarge_ || most >= (1u << (16 - coded.tagBits)) ? 4 : 2;
    }
    switch (kind) {
    case U16: return 2;
    case Str: return largeStrings_ ? 4 : 2;
    case Guid: return largeGuids_ ? 4 : 2;
    case Blob: return largeBlobs_ ? 4 : 2;
    default: return 4;
    }
  };
  uint64_t offset = at; // rows (< 2^24) times widths (< 40) cannot overflow this
  for (uint8_t t = 0; t < SchemaTables; ++t) {
    Table &table = tables_[t];
    for (unsigned c = 0; c < schema[t].size() && schema[t][c] != End; ++c) {
      table.columnOffset[c] = uint8_t(table.rowSize);
      table.columnSize[c] = columnSize(schema[t][c]);
      table.rowSize += table.columnSize[c];
    }
    table.offset = stream.offset + offset;
    offset += uint64_t(table.rows) * table.rowSize;
    if (offset > stream.size)
      return fail("table 0x" + Twine::utohexstr(t) + " (" + Twine(table.rows) + " rows) runs past the table stream");
  }
  // Tables past GenericParamConstraint (Portable PDB's) follow and are never read.
  return Error::success();
}

// parseTables checked that every row of every schema table is in bytes_.
uint32_t EcmaMetadata::cell(uint8_t table, uint32_t row, unsigned column) const {
  const Table &t = tables_[table];
  const uint8_t *at = bytes_.data() + t.offset + size_t(row - 1) * t.rowSize + t.columnOffset[column];
  return t.columnSize[column] == 2 ? support::endian::read16le(at) : support::endian::read32le(at);
}

// Tables II.22 keeps sorted by a column are searched, not scanned; unsorted
// hostile tables just fail to find a row.
uint32_t EcmaMetadata::lowerBound(uint8_t table, unsigned column, uint32_t value) const {
  uint32_t lo = 1, hi = tables_[table].rows + 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cell(table, mid, column) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

std::optional<std::string> EcmaMetadata::string(uint32_t index) const {
  if (index >= strings_.size) return std::nullopt;
  const char *begin = reinterpret_cast<const char *>(bytes_.data() + strings_.offset + index);
  const void *nul = std::memchr(begin, 0, strings_.size - index);
  if (!nul || size_t(static_cast<const char *>(nul) - begin) > MaxNameLength) return std::nullopt;
  return std::string(begin, static_cast<const char *>(nul));
}

// II.23.2: a blob is its compressed length, then its bytes.
std::optional<std::span<const uint8_t>> EcmaMetadata::blob(uint32_t index) const {
  if (index >= blobs_.size) return std::nullopt;
  std::span<const uint8_t> heap(bytes_.data() + blobs_.offset + index, blobs_.size - index);
  auto length = compressedUnsigned(heap);
  if (!length || length->value > heap.size() - length->size) return std::nullopt;
  return heap.subspan(length->size, length->value);
}

// NestedClass is sorted by its nested column (II.22.32).
std::optional<uint32_t> EcmaMetadata::enclosingType(uint32_t typeDefRow) const {
  uint8_t nested = number(MetadataTable::NestedClass);
  uint32_t lo = lowerBound(nested, NestedClassNested, typeDefRow);
  if (lo > tables_[nested].rows || cell(nested, lo, NestedClassNested) != typeDefRow) return std::nullopt;
  return cell(nested, lo, NestedClassEnclosing);
}

std::optional<std::string> EcmaMetadata::typeFullName(uint32_t typeDefToken) const {
  uint8_t typeDef = number(MetadataTable::TypeDef);
  uint32_t row = rowOf(typeDefToken);
  if (tableOf(typeDefToken) != typeDef) return std::nullopt;
  std::string name;
  // Bounded: a corrupt NestedClass table may make types enclose each other.
  for (unsigned depth = 0; depth < MaxNesting; ++depth) {
    if (!validRow(typeDef, row)) return std::nullopt;
    auto simple = string(cell(typeDef, row, TypeDefName));
    if (!simple) return std::nullopt;
    name = name.empty() ? *simple : *simple + "+" + name;
    auto enclosing = enclosingType(row);
    if (!enclosing) {
      auto space = string(cell(typeDef, row, TypeDefNamespace));
      if (!space) return std::nullopt;
      return space->empty() ? name : *space + "." + name;
    }
    row = *enclosing;
  }
  return std::nullopt;
}

std::optional<std::string> EcmaMetadata::methodName(uint32_t methodDefToken) const {
  uint8_t methodDef = number(MetadataTable::MethodDef);
  if (tableOf(methodDefToken) != methodDef || !validRow(methodDef, rowOf(methodDefToken))) return std::nullopt;
  return string(cell(methodDef, rowOf(methodDefToken), MethodDefName));
}

// The position TypeDef.MethodList ranges count in: the method's own row, or
// in unoptimized metadata the MethodPtr row that points at it.
std::optional<uint32_t> EcmaMetadata::methodListRow(uint32_t methodRow) const {
  uint8_t pointers = number(MetadataTable::MethodPtr);
  if (tables_[pointers].rows == 0) return methodRow;
  for (uint32_t row = 1; row <= tables_[pointers].rows; ++row)
    if (cell(pointers, row, 0) == methodRow) return row;
  return std::nullopt;
}

// Each TypeDef owns the methods from its MethodList up to the next TypeDef's:
// the owner is the last TypeDef whose list starts at or before the method.
std::optional<uint32_t> EcmaMetadata::methodTypeDefToken(uint32_t methodDefToken) const {
  uint8_t typeDef = number(MetadataTable::TypeDef);
  if (tableOf(methodDefToken) != number(MetadataTable::MethodDef) || !validRow(tableOf(methodDefToken), rowOf(methodDefToken)))
    return std::nullopt;
  auto listRow = methodListRow(rowOf(methodDefToken));
  if (!listRow) return std::nullopt;
  uint32_t lo = lowerBound(typeDef, TypeDefMethodList, *listRow + 1); // first TypeDef starting after the method
  if (lo == 1) return std::nullopt;
  return token(MetadataTable::TypeDef, lo - 1);
}

// GenericParam is sorted by owner, then number (II.22.20).
std::optional<std::vector<std::string>> EcmaMetadata::genericParameterNames(uint32_t ownerToken) const {
  uint8_t generic = number(MetadataTable::GenericParam);
  uint32_t tag;
  if (tableOf(ownerToken) == number(MetadataTable::TypeDef)) tag = 0;
  else if (tableOf(ownerToken) == number(MetadataTable::MethodDef)) tag = 1;
  else return std::nullopt;
  if (!validRow(tableOf(ownerToken), rowOf(ownerToken))) return std::nullopt;
  uint32_t owner = rowOf(ownerToken) << 1 | tag;
  std::vector<std::string> names;
  for (uint32_t row = lowerBound(generic, GenericParamOwner, owner); row <= tables_[generic].rows && cell(generic, row, GenericParamOwner) == owner; ++row) {
    // Numbers run 0, 1, ... and are 16 bits wide, which also bounds this loop.
    if (cell(generic, row, GenericParamNumber) != names.size()) return std::nullopt;
    auto name = string(cell(generic, row, GenericParamName));
    if (!name) return std::nullopt;
    names.push_back(std::move(*name));
  }
  return names;
}

// Namespace.Name of a TypeDef or TypeRef, as the runtime's SigFormat prints a
// class in a signature (without its enclosing types).
std::optional<std::string> EcmaMetadata::namespaceDotName(uint32_t typeToken) const {
  uint8_t table = tableOf(typeToken);
  uint32_t row = rowOf(typeToken);
  unsigned nameColumn, namespaceColumn;
  if (table == number(MetadataTable::TypeDef)) nameColumn = TypeDefName, namespaceColumn = TypeDefNamespace;
  else if (table == number(MetadataTable::TypeRef)) nameColumn = TypeRefName, namespaceColumn = TypeRefNamespace;
  else return std::nullopt;
  if (!validRow(table, row)) return std::nullopt;
  auto name = string(cell(table, row, nameColumn));
  auto space = string(cell(table, row, namespaceColumn));
  if (!name || !space) return std::nullopt;
  return space->empty() ? *name : *space + "." + *name;
}

// The type whose constructor a CustomAttribute row names: a MethodDef of this
// assembly or a MemberRef on a TypeDef or TypeRef.
std::optional<std::string> EcmaMetadata::attributeTypeName(uint32_t attributeRow) const {
  auto constructor = codedToken(CustomAttributeType, cell(number(MetadataTable::CustomAttribute), attributeRow, AttributeConstructor));
  if (!constructor) return std::nullopt;
  if (tableOf(*constructor) == number(MetadataTable::MethodDef)) {
    auto type = methodTypeDefToken(*constructor);
    return type ? namespaceDotName(*type) : std::nullopt;
  }
  uint8_t memberRef = number(MetadataTable::MemberRef);
  if (tableOf(*constructor) != memberRef || !validRow(memberRef, rowOf(*constructor))) return std::nullopt;
  auto type = codedToken(MemberRefParent, cell(memberRef, rowOf(*constructor), MemberRefClass));
  return type ? namespaceDotName(*type) : std::nullopt;
}

// CustomAttribute is sorted by its parent (II.22.10); the assembly is row 1 of
// the Assembly table, tag 14 of HasCustomAttribute.
std::optional<std::string> EcmaMetadata::assemblyInformationalVersion() const {
  uint8_t attributes = number(MetadataTable::CustomAttribute);
  if (tables_[number(MetadataTable::Assembly)].rows == 0) return std::nullopt;
  constexpr uint32_t AssemblyParent = 1u << 5 | 14;
  for (uint32_t row = lowerBound(attributes, AttributeParent, AssemblyParent); row <= tables_[attributes].rows && cell(attributes, row, AttributeParent) == AssemblyParent; ++row) {
    if (attributeTypeName(row) != "System.Reflection.AssemblyInformationalVersionAttribute") continue;
    // II.23.3: the prolog 0x0001, then the constructor's one string argument
    // as a SerString (0xff for null, else a compressed length and UTF-8).
    auto value = blob(cell(attributes, row, AttributeValue));
    if (!value || value->size() < 3 || (*value)[0] != 1 || (*value)[1] != 0) return std::nullopt;
    auto length = compressedUnsigned(value->subspan(2));
    if (!length || length->value > value->size() - 2 - length->size) return std::nullopt;
    auto text = value->subspan(2 + length->size, length->value);
    return std::string(text.begin(), text.end());
  }
  return std::nullopt;
}

// SigFormat's spelling of the element types that name a type by themselves.
const char *EcmaMetadata::primitiveTypeName(uint8_t elementType) {
  switch (elementType) {
  case 0x01: return "Void";
  case 0x02: return "Boolean";
  case 0x03: return "Char";
  case 0x04: return "SByte";
  case 0x05: return "Byte";
  case 0x06: return "Int16";
  case 0x07: return "UInt16";
  case 0x08: return "Int32";
  case 0x09: return "UInt32";
  case 0x0a: return "Int64";
  case 0x0b: return "UInt64";
  case 0x0c: return "Single";
  case 0x0d: return "Double";
  case 0x0e: return "System.String";
  case 0x16: return "TypedReference";
  case 0x18: return "IntPtr";
  case 0x19: return "UIntPtr";
  case 0x1c: return "System.Object";
  default: return nullptr;
  }
}

// The Assembly table has at most one row (II.22.2); its Name is the simple name.
std::optional<std::string> EcmaMetadata::assemblyName() const {
  uint8_t assembly = number(MetadataTable::Assembly);
  if (!validRow(assembly, 1)) return std::nullopt;
  return string(cell(assembly, 1, AssemblyName));
}

std::optional<std::string> EcmaMetadata::genericParameterName(uint32_t genericParamToken) const {
  uint8_t generic = number(MetadataTable::GenericParam);
  if (tableOf(genericParamToken) != generic || !validRow(generic, rowOf(genericParamToken))) return std::nullopt;
  return string(cell(generic, rowOf(genericParamToken), GenericParamName));
}

// Formats the types of a MethodDefSig (II.23.2.1) as SigFormat does.
class EcmaMetadata::SignatureReader {
public:
  // `metadata` resolves the signature's tokens; without it a signature that has any does not format.
  SignatureReader(const EcmaMetadata *metadata, std::span<const uint8_t> signature, const SignatureContext &context)
      : metadata_(metadata), bytes_(signature), context_(context) {}

  std::optional<std::string> parameters() {
    auto callingConvention = byte();
    if (!callingConvention) return std::nullopt;
    if ((*callingConvention & 0x10) && !compressed()) return std::nullopt; // generic parameter count
    auto count = compressed();
    std::string ignored, out = "(";
    if (!count || !type(ignored, 0)) return std::nullopt; // the return type
    for (uint32_t i = 0; i < *count; ++i) {
      if (i) out += ", ";
      if (!type(out, 0)) return std::nullopt;
    }
    if ((*callingConvention & 0xf) == 5) out += *count ? ", ..." : "..."; // VARARG
    return out + ")";
  }

private:
  std::optional<uint8_t> byte() {
    if (at_ >= bytes_.size()) return std::nullopt;
    return bytes_[at_++];
  }
  std::optional<uint32_t> compressed() {
    auto value = compressedUnsigned(bytes_.subspan(std::min(at_, bytes_.size())));
    if (!value) return std::nullopt;
    at_ += value->size;
    return value->value;
  }
  // A runtime-built signature's TypeHandle (ELEMENT_TYPE_INTERNAL): a pointer,
  // little-endian, of the target's size.
  std::optional<uint64_t> pointer() {
    unsigned size = context_.pointerSize;
    if ((size != 4 && size != 8) || at_ > bytes_.size() || bytes_.size() - at_ < size) return std::nullopt;
    uint64_t value = 0;
    for (unsigned i = 0; i < size; ++i) value |= uint64_t(bytes_[at_ + i]) << (8 * i);
    at_ += size;
    return value;
  }
  // TypeDefOrRefOrSpecEncoded: the row, then two tag bits.
  std::optional<uint32_t> typeToken() {
    auto value = compressed();
    if (!value || (*value & 3) == 3) return std::nullopt;
    constexpr std::array<MetadataTable, 3> tables{MetadataTable::TypeDef, MetadataTable::TypeRef, MetadataTable::TypeSpec};
    return token(tables[*value & 3], *value >> 2);
  }
  bool append(std::string &out, const std::string &text) {
    out += text;
    return out.size() <= MaxNameLength;
  }
  bool genericParameter(std::string &out, const std::vector<std::string> &texts, const char *prefix) {
    auto index = compressed();
    if (!index) return false;
    return append(out, *index < texts.size() ? texts[*index] : prefix + std::to_string(*index));
  }
  bool internalType(std::string &out) {
    auto handle = pointer();
    auto name = handle && context_.internalTypeName ? context_.internalTypeName(*handle) : std::nullopt;
    return name && append(out, *name);
  }
  bool type(std::string &out, unsigned depth);
  bool arrayShape(std::string &out);

  const EcmaMetadata *metadata_;
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  const SignatureContext &context_;
};

bool EcmaMetadata::SignatureReader::arrayShape(std::string &out) {
  auto rank = compressed();
  if (!rank || *rank > 32) return false; // the runtime's limit
  out += '[';
  out.append(*rank ? *rank - 1 : 0, ',');
  out += ']';
  for (unsigned list = 0; list < 2; ++list) { // sizes, then lower bounds
    auto count = compressed();
    if (!count) return false;
    for (uint32_t i = 0; i < *count; ++i)
      if (!compressed()) return false; // every element takes a byte: bounded by the blob
  }
  return true;
}

bool EcmaMetadata::SignatureReader::type(std::string &out, unsigned depth) {
  if (depth > MaxNesting) return false;
  // Each loop turn consumes a custom modifier, which SigFormat does not print.
  for (;;) {
    auto element = byte();
    if (!element) return false;
    if (const char *primitive = primitiveTypeName(*element)) return append(out, primitive);
    switch (*element) {
    case 0x0f: return type(out, depth + 1) && append(out, "*");
    case 0x10: return type(out, depth + 1) && append(out, " ByRef");
    case 0x11: // VALUETYPE
    case 0x12: { // CLASS
      auto token = typeToken();
      auto name = token && metadata_ ? metadata_->namespaceDotName(*token) : std::nullopt;
      return name && append(out, *name);
    }
    case 0x13: return genericParameter(out, context_.typeArguments, "!");
    case 0x14: return type(out, depth + 1) && arrayShape(out);
    case 0x15: { // GENERICINST
      if (!type(out, depth + 1)) return false;
      auto count = compressed();
      if (!count) return false;
      out += '<';
      for (uint32_t i = 0; i < *count; ++i) {
        if (i) out += ',';
        if (!type(out, depth + 1)) return false;
      }
      return append(out, ">");
    }
    case 0x1b: { // FNPTR: a whole method signature
      auto convention = compressed(), count = compressed();
      if (!convention || !count || !type(out, depth + 1)) return false;
      out += " (";
      for (uint32_t i = 0; i < *count; ++i) {
        if (i) out += ", ";
        if (!type(out, depth + 1)) return false;
      }
      return append(out, ")");
    }
    case 0x1d: return type(out, depth + 1) && append(out, "[]");
    case 0x1e: return genericParameter(out, context_.methodArguments, "!!");
    case 0x1f: // CMOD_REQD
    case 0x20: // CMOD_OPT
      if (!typeToken()) return false;
      continue;
    case 0x21: return internalType(out); // INTERNAL: only in signatures the runtime built
    case 0x22: // CMOD_INTERNAL: a required flag, then a TypeHandle
      if (!byte() || !pointer()) return false;
      continue;
    default: return false; // not a type a method's signature may hold
    }
  }
}

std::optional<std::string> EcmaMetadata::methodParameters(uint32_t methodDefToken) const {
  auto owner = methodTypeDefToken(methodDefToken);
  auto typeNames = owner ? genericParameterNames(*owner) : std::nullopt;
  auto methodNames = genericParameterNames(methodDefToken);
  if (!typeNames || !methodNames) return std::nullopt;
  return methodParameters(methodDefToken, SignatureContext{*typeNames, *methodNames});
}

std::optional<std::string> EcmaMetadata::methodParameters(uint32_t methodDefToken, const SignatureContext &context) const {
  uint8_t methodDef = number(MetadataTable::MethodDef);
  if (tableOf(methodDefToken) != methodDef || !validRow(methodDef, rowOf(methodDefToken))) return std::nullopt;
  auto signature = blob(cell(methodDef, rowOf(methodDefToken), MethodDefSignature));
  if (!signature) return std::nullopt;
  return SignatureReader(this, *signature, context).parameters();
}

std::optional<std::string> EcmaMetadata::signatureParameters(const EcmaMetadata *tokens, std::span<const uint8_t> signature,
                                                             const SignatureContext &context) {
  return SignatureReader(tokens, signature, context).parameters();
}

std::optional<std::string> EcmaMetadata::methodFullName(uint32_t methodDefToken, Parameters parameters) const {
  auto owner = methodTypeDefToken(methodDefToken);
  auto type = owner ? typeFullName(*owner) : std::nullopt;
  auto name = methodName(methodDefToken);
  auto generics = genericParameterNames(methodDefToken);
  if (!type || !name || !generics) return std::nullopt;
  std::string full = *type + "." + *name;
  if (!generics->empty()) {
    full += '[';
    for (size_t i = 0; i < generics->size(); ++i) full += (i ? "," : "") + (*generics)[i];
    full += ']';
  }
  if (parameters == Parameters::Include)
    if (auto list = methodParameters(methodDefToken)) full += *list;
  return full;
}

// PE/COFF by hand: LLVM's COFFObjectFile wants a file's layout and rejects
// images as the loader mapped them. Only the headers, the CLI header and the
// metadata are read, so an image whose other pages are missing still names.
Expected<EcmaMetadata> EcmaMetadata::fromPeImage(const MemorySource &memory, uint64_t base, bool mapped) {
  auto u16 = [&](uint64_t offset) { return memory.readValue<uint16_t>(base + offset); };
  auto u32 = [&](uint64_t offset) { return memory.readValue<uint32_t>(base + offset); };
  auto peOffset = u32(0x3c);
  if (u16(0) != 0x5a4d || !peOffset || *peOffset > (1u << 20) || u32(*peOffset) != 0x00004550u)
    return fail("not a PE image (no MZ/PE signatures)");
  uint64_t coff = uint64_t(*peOffset) + 4, optional = coff + 20;
  auto sectionCount = u16(coff + 2);
  auto optionalSize = u16(coff + 16);
  auto magic = u16(optional);
  if (!sectionCount || !optionalSize || !magic || (*magic != 0x10b && *magic != 0x20b))
    return fail("the PE optional header is truncated or of an unknown kind");
  // Data directory 14 (the COM descriptor) of PE32 / PE32+.
  uint64_t directories = optional + (*magic == 0x10b ? 96 : 112);
  constexpr unsigned ComDescriptor = 14;
  auto directoryCount = u32(directories - 4);
  uint64_t comEntry = directories + ComDescriptor * 8;
  auto comRva = u32(comEntry);
  if (!directoryCount || *directoryCount <= ComDescriptor || comEntry + 8 > optional + *optionalSize || !comRva || !*comRva)
    return fail("the image has no CLI header (not a .NET assembly)");

  uint64_t sections = optional + *optionalSize;
  auto toOffset = [&](uint32_t rva, uint32_t size) -> std::optional<uint64_t> {
    if (mapped) return rva;
    for (unsigned i = 0; i < *sectionCount; ++i) {
      uint64_t header = sections + i * 40;
      auto address = u32(header + 12), rawSize = u32(header + 16), rawOffset = u32(header + 20);
      if (!address || !rawSize || !rawOffset) return std::nullopt;
      if (rva >= *address && rva - *address < *rawSize && size <= *rawSize - (rva - *address))
        return uint64_t(*rawOffset) + (rva - *address);
    }
    return std::nullopt;
  };
  auto cliHeader = toOffset(*comRva, 16);
  auto metadataRva = cliHeader ? u32(*cliHeader + 8) : std::nullopt;
  auto metadataSize = cliHeader ? u32(*cliHeader + 12) : std::nullopt;
  if (!metadataRva || !metadataSize)
    return fail("the CLI header at RVA 0x" + Twine::utohexstr(*comRva) + " is outside the image");
  constexpr uint32_t MaxMetadataBytes = 256u << 20;
  auto metadata = toOffset(*metadataRva, *metadataSize);
  auto unreadable = [&] {
    return fail("the metadata at RVA 0x" + Twine::utohexstr(*metadataRva) + " (" + Twine(*metadataSize) +
                " bytes) is outside the image or not readable");
  };
  if (!metadata || *metadataSize == 0 || *metadataSize > MaxMetadataBytes) return unreadable();
  // The root's signature first: the wrong one of the two readings (mapped,
  // flat) is then refused without copying megabytes.
  if (auto root = memory.readValue<uint32_t>(base + *metadata); root && *root != 0x424a5342u)
    return fail("no metadata root (\"BSJB\" signature)");
  // A mapped core holds them: read in place (a fifth of a warm .NET walk was
  // this copy). Else appended a piece at a time: a vector sized first would
  // be zero-filled, a pass over every byte before the copy.
  if (auto inPlace = memory.bytesInPlace(base + *metadata, *metadataSize)) return parseInPlace(*inPlace);
  // Nothing reserved for a claim whose last byte is not there: a 2.7 KiB
  // image claiming 256 MiB of metadata had it reserved before the first
  // piece failed (fuzz/findings/ecma-metadata-size-past-image).
  if (!memory.readValue<uint8_t>(base + *metadata + *metadataSize - 1)) return unreadable();
  std::vector<uint8_t> bytes;
  bytes.reserve(*metadataSize);
  std::array<uint8_t, 65536> piece;
  for (uint64_t done = 0; done < *metadataSize;) {
    size_t size = size_t(std::min<uint64_t>(piece.size(), *metadataSize - done));
    if (!memory.read(base + *metadata + done, std::span(piece.data(), size))) return unreadable();
    bytes.insert(bytes.end(), piece.begin(), piece.begin() + size);
    done += size;
  }
  return parse(std::move(bytes));
}

Expected<EcmaMetadata> EcmaMetadata::fromPeImage(std::span<const uint8_t> image, bool mapped) {
  BufferMemory memory;
  memory.add(0, std::vector<uint8_t>(image.begin(), image.end()));
  return fromPeImage(memory, 0, mapped);
}

} // namespace stackwalk::frames
