// Names for MethodDescs as SOS and ClrMD print them (the DAC's
// TypeString::AppendMethodInternal with FormatNamespace | FormatFullInst |
// FormatSignature):
//   Namespace.Outer+Inner`1[[System.Int32, System.Private.CoreLib]].B[[System.__Canon, System.Private.CoreLib]](Int32, System.__Canon)
// The RuntimeTypeSystem contract gives a MethodDesc's chunk, MethodTable,
// Module, token and instantiation; the Module's metadata names the token and
// its signature, whose generic parameters print as the instantiation's types
// (TypeNames). Methods without metadata are DynamicClass.NAME(...) (compiled
// expressions and other DynamicMethods) and ILStubClass.NAME(...) (the
// runtime's IL stubs), their signature the one the runtime stored.
#pragma once

#include "stackwalk/frames/EcmaMetadata.h"
#include "stackwalk/frames/ManagedModules.h"
#include "stackwalk/frames/RuntimeData.h"
#include "stackwalk/frames/TypeNames.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace stackwalk::frames {

struct ManagedMethod {
  uint64_t methodDesc = 0;
  uint32_t token = 0;     // 0x06xxxxxx; 0 for methods without metadata (IL stubs)
  uint64_t module = 0;    // the runtime's Module
  std::string moduleName; // the assembly's file name, "System.Private.CoreLib.dll"
  std::string name;       // as above
};

class MethodNames {
public:
  explicit MethodNames(const RuntimeData &data) : data_(data), modules_(data), types_(data, modules_) {}

  // Reads the MethodDesc back (its chunk must point to a MethodTable whose
  // Module is readable) and names it; an error says what did not read back.
  // When only the instantiation cannot be read (its pages are not in the
  // dump), the name is the metadata's open form: Outer+Inner`1.B[U](T, U).
  llvm::Expected<ManagedMethod> describe(uint64_t methodDesc);
  // Namespace.Outer+Inner for a MethodTable (its Module's metadata, its TypeDef row).
  llvm::Expected<std::string> typeName(uint64_t methodTable);
  // The metadata of a runtime Module's image (the Loader contract); null when
  // it does not read.
  const EcmaMetadata *metadata(uint64_t module) { return modules_.module(module).metadata.get(); }

private:
  struct MethodDescFields;
  llvm::Expected<MethodDescFields> readMethodDesc(uint64_t methodDesc);
  llvm::Expected<std::string> metadataMethodName(const MethodDescFields &fields, const EcmaMetadata &metadata);
  llvm::Expected<std::string> instantiatedName(const MethodDescFields &fields, const EcmaMetadata &metadata);
  llvm::Expected<std::string> dynamicMethodName(const MethodDescFields &fields);

  const RuntimeData &data_;
  ManagedModules modules_;
  TypeNames types_;
  std::map<uint64_t, ManagedMethod> methods_;
};

} // namespace stackwalk::frames
