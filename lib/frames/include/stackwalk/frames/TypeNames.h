// Names of runtime types (TypeHandles: a MethodTable, or a TypeDesc tagged
// with bit 1) in the two spellings of the runtime's own formatters, which SOS
// and ClrMD print (both ask the DAC, which runs them):
// - TypeString's, with full instantiations (FormatNamespace | FormatFullInst):
//     Namespace.Outer+Inner`1[[System.Int32, System.Private.CoreLib]]
//   each type argument in brackets with its assembly's simple name, a generic
//   parameter bare, arrays as T[], T[*], T[,], then T* and T&;
// - SigFormat's (AddType), which a signature's substituted parameters use:
//     Int32, System.String, Namespace.Name<Int32,System.__Canon>, T[], T ByRef, T*
//   (a class by its namespace and name, without its enclosing types).
// Reads follow the RuntimeTypeSystem contract (RuntimeTypeSystem.md): the
// MethodTable's flags, PerInstInfo and GenericsDictInfo, the TypeDescs.
// Names are not escaped: TypeString would put a backslash before , [ ] & * +
// inside a simple name, which no compiler-generated name here contains.
#pragma once

#include "stackwalk/frames/ManagedModules.h"
#include "stackwalk/frames/RuntimeData.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk::frames {

class TypeNames {
public:
  TypeNames(const RuntimeData &data, ManagedModules &modules) : data_(data), modules_(modules) {}

  llvm::Expected<std::string> reflectionName(uint64_t typeHandle);
  // "[[A, Assembly],[B, Assembly]]": an instantiation as TypeString appends it.
  llvm::Expected<std::string> instantiation(const std::vector<uint64_t> &typeHandles);
  llvm::Expected<std::string> signatureName(uint64_t typeHandle);
  // Namespace.Name of the TypeDef of a MethodTable, as SigFormat prints a
  // TypeHandle that a runtime-built signature holds (ELEMENT_TYPE_INTERNAL).
  llvm::Expected<std::string> typeDefName(uint64_t methodTable);
  // A MethodTable's module and TypeDef token, from those two fields alone
  // (a true primitive's EEClass, which the rest of a type's reads need, is
  // not in normal and triage dumps).
  struct TypeDef {
    uint64_t module = 0;
    uint32_t token = 0;
  };
  llvm::Expected<TypeDef> typeDefOf(uint64_t methodTable);
  // A MethodTable's type arguments: {} for a type that is not generic.
  llvm::Expected<std::vector<uint64_t>> typeArguments(uint64_t methodTable);
  // `count` TypeHandles stored one after another (a method's instantiation).
  llvm::Expected<std::vector<uint64_t>> typeHandles(uint64_t address, unsigned count);

private:
  struct TypeInfo;
  llvm::Expected<TypeInfo> inspect(uint64_t typeHandle, unsigned depth);
  llvm::Expected<TypeInfo> inspectMethodTable(uint64_t methodTable);
  llvm::Expected<TypeInfo> inspectTypeDesc(uint64_t typeDesc, unsigned depth);
  // typeArguments for a MethodTable already inspected.
  llvm::Expected<std::vector<uint64_t>> typeArguments(const TypeInfo &info);
  llvm::Error appendReflection(std::string &out, uint64_t typeHandle, bool withAssembly, unsigned depth);
  llvm::Error appendInstantiation(std::string &out, const std::vector<uint64_t> &typeHandles, unsigned depth);
  llvm::Error appendSignature(std::string &out, uint64_t typeHandle, unsigned depth);
  llvm::Error appendGenericParameter(std::string &out, const TypeInfo &info);

  const RuntimeData &data_;
  ManagedModules &modules_;
};

} // namespace stackwalk::frames
