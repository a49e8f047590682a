// ECMA-335 metadata (Partition II §24): the tables and heaps at an assembly's
// CLI header, read to name managed methods the way debuggers print them.
//
// LLVM reads PE/COFF but has no ECMA-335 metadata parser (its COFF reader
// stops at the COM descriptor's data directory), so this is one of our own.
// The bytes are hostile: every heap index, row number, coded index and
// signature byte is checked; a value that does not resolve gives nullopt.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk::frames {

// Table numbers (II.22) of the tables named or used for names here.
enum class MetadataTable : uint8_t {
  TypeRef = 0x01,
  TypeDef = 0x02,
  MethodPtr = 0x05,
  MethodDef = 0x06,
  MemberRef = 0x0a,
  CustomAttribute = 0x0c,
  TypeSpec = 0x1b,
  Assembly = 0x20,
  NestedClass = 0x29,
  GenericParam = 0x2a,
};

// Names come out as SOS `clrstack` and ClrMD print them, from the metadata
// alone, which has no instantiation (MethodNames adds the runtime's, and uses
// this open form only when that cannot be read):
//   Namespace.Outer+Inner`1.Method[U](Int32, System.String, T)
// - the type is its reflection FullName: namespace, enclosing types joined
//   by '+', generic arity as metadata spells it (`1);
// - a generic method lists its parameters' names in reflection's brackets
//   (`Method[U]`), where SOS would show an instantiation `[[...]]`;
// - parameters as the runtime's SigFormat prints them (primitives short,
//   other types as Namespace.Name, `ByRef`, `[]`, `<A,B>`), generic
//   parameters by name (`T`) or, given a SignatureContext, as the
//   instantiation's types.
class EcmaMetadata {
public:
  // The metadata root ("BSJB") and everything after it, e.g. the bytes at the
  // CLI header's MetaData RVA.
  static llvm::Expected<EcmaMetadata> parse(std::vector<uint8_t> bytes);
  // The same for bytes that outlive the metadata (a mapped dump's), read in place.
  static llvm::Expected<EcmaMetadata> parseInPlace(std::span<const uint8_t> bytes);
  EcmaMetadata(EcmaMetadata &&) = default;
  EcmaMetadata &operator=(EcmaMetadata &&) = default;
  EcmaMetadata(const EcmaMetadata &) = delete; // bytes_ may view owned_
  EcmaMetadata &operator=(const EcmaMetadata &) = delete;
  // Finds the metadata in a PE image through the COM descriptor (data
  // directory 14). A file is laid out by its section table; a mapped image
  // (the loader placed sections at their RVAs) is read at RVA = offset.
  // Which layout a runtime-loaded image has depends on the runtime and on
  // whether the image is ReadyToRun, so the caller says which it holds; a
  // wrong guess fails (an RVA outside the image, or no "BSJB" where the
  // metadata should start), so trying mapped, then file, is safe.
  static llvm::Expected<EcmaMetadata> fromPeImage(std::span<const uint8_t> image, bool mapped);
  // The same for an image at `base` in a process's memory, reading only the
  // headers and the metadata.
  static llvm::Expected<EcmaMetadata> fromPeImage(const MemorySource &memory, uint64_t base, bool mapped);

  // The root's runtime version string, e.g. "v4.0.30319".
  const std::string &version() const { return version_; }
  uint32_t rowCount(MetadataTable table) const { return this->table(uint8_t(table)).rows; }

  // Namespace.Outer+Inner`1 for a TypeDef token (0x02xxxxxx).
  std::optional<std::string> typeFullName(uint32_t typeDefToken) const;
  // The method's simple name ("Add", ".ctor") for a MethodDef token (0x06xxxxxx).
  std::optional<std::string> methodName(uint32_t methodDefToken) const;
  // The TypeDef token declaring a MethodDef.
  std::optional<uint32_t> methodTypeDefToken(uint32_t methodDefToken) const;
  // Names of a TypeDef's or MethodDef's generic parameters in order ({} when
  // it has none; nullopt when the token or a name does not resolve).
  std::optional<std::vector<std::string>> genericParameterNames(uint32_t token) const;
  // "(Int32, System.String)" from the MethodDef's signature blob.
  std::optional<std::string> methodParameters(uint32_t methodDefToken) const;

  // What a signature's generic parameters print as (SigFormat substitutes a
  // method's instantiation: "Int32" for T of List<int>; with no instantiation
  // the parameters' names), and how to name the TypeHandles that signatures
  // the runtime built itself hold (ELEMENT_TYPE_INTERNAL: IL stubs, dynamic
  // methods); without a namer such a signature does not format.
  struct SignatureContext {
    std::vector<std::string> typeArguments, methodArguments;
    std::function<std::optional<std::string>(uint64_t typeHandle)> internalTypeName = {};
    unsigned pointerSize = 8;
  };
  std::optional<std::string> methodParameters(uint32_t methodDefToken, const SignatureContext &context) const;
  // The same for a signature blob held elsewhere (a dynamic method's stored
  // one), whose tokens are those of `tokens`; with null, one that has any
  // does not format.
  static std::optional<std::string> signatureParameters(const EcmaMetadata *tokens, std::span<const uint8_t> signature,
                                                        const SignatureContext &context);
  // Namespace.Name of a TypeDef or TypeRef without its enclosing types, as
  // SigFormat prints a class.
  std::optional<std::string> namespaceDotName(uint32_t typeDefOrRefToken) const;
  // The name of a GenericParam row (0x2axxxxxx), e.g. "T".
  std::optional<std::string> genericParameterName(uint32_t genericParamToken) const;
  // The assembly's simple name ("System.Private.CoreLib") from its Assembly row.
  std::optional<std::string> assemblyName() const;
  // SigFormat's name for an element type that is a type by itself ("Int32",
  // "System.String"); null for the others.
  static const char *primitiveTypeName(uint8_t elementType);

  enum class Parameters { Include, Omit };
  // The whole name as in the format above; with Omit, without "(...)". When
  // only the signature is unreadable the name comes without it.
  std::optional<std::string> methodFullName(uint32_t methodDefToken, Parameters = Parameters::Include) const;

  // The assembly's [AssemblyInformationalVersion] argument ("10.0.12+a1b2c3"):
  // for System.Private.CoreLib, the text Environment.Version is parsed from.
  std::optional<std::string> assemblyInformationalVersion() const;

  // One table's place in the #~ stream, exposed for the tests of its sizing.
  struct Table {
    uint32_t rows = 0, rowSize = 0;
    size_t offset = 0;                  // of row 1, in bytes_
    std::array<uint8_t, 9> columnOffset{}; // within a row
    std::array<uint8_t, 9> columnSize{};
  };
  const Table &table(uint8_t number) const {
    static const Table none;
    return number < tables_.size() ? tables_[number] : none;
  }

private:
  struct Heap {
    size_t offset = 0, size = 0;
  };
  class SignatureReader;

  EcmaMetadata() = default;
  llvm::Error parseRoot();
  llvm::Error parseTables(Heap stream);
  uint32_t cell(uint8_t table, uint32_t row, unsigned column) const;
  // The first row whose `column` is at least `value` (rows + 1 when none).
  uint32_t lowerBound(uint8_t table, unsigned column, uint32_t value) const;
  bool validRow(uint8_t table, uint32_t row) const { return row >= 1 && row <= tables_[table].rows; }
  std::optional<std::string> string(uint32_t index) const;
  std::optional<std::span<const uint8_t>> blob(uint32_t index) const;
  std::optional<uint32_t> enclosingType(uint32_t typeDefRow) const;
  std::optional<uint32_t> methodListRow(uint32_t methodRow) const;
  std::optional<std::string> attributeTypeName(uint32_t attributeRow) const;

  std::vector<uint8_t> owned_;   // the bytes when they were copied
  std::span<const uint8_t> bytes_; // owned_, or bytes in place
  std::string version_;
  Heap strings_, blobs_;
  bool largeStrings_ = false, largeBlobs_ = false, largeGuids_ = false;
  bool allIndexesLarge_ = false; // a minimal ENC delta (#JTD)
  std::array<Table, 64> tables_{};
};

} // namespace stackwalk::frames
