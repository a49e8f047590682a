#include "stackwalk/frames/TypeNames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

using llvm::Error;
using llvm::Expected;

namespace stackwalk::frames {
namespace {

// MethodTable.MTFlags (RuntimeTypeSystem.md, WFLAGS_LOW / WFLAGS_HIGH). The low
// half holds the generics bits only when the type has no component size.
constexpr uint32_t HasComponentSize = 0x80000000;
constexpr uint32_t GenericsMask = 0x30, GenericsTypical = 0x30;
constexpr uint32_t CategoryMask = 0x000F0000, CategoryArrayMask = 0x000C0000, CategoryArray = 0x00080000;
constexpr uint32_t CategoryIfArrayThenSzArray = 0x00020000, CategoryValueType = 0x00040000;
constexpr uint32_t CategoryNullable = 0x00050000, CategoryPrimitive = 0x00060000, CategoryTruePrimitive = 0x00070000;
constexpr uint64_t TypeDescTag = 2, CanonMethodTableTag = 1;
constexpr uint32_t TypeDefTable = 0x02000000;
// CorElementType values (ECMA-335 II.23.1.16) the formatters tell apart.
enum : uint8_t {
  ElementPointer = 0x0f, ElementByRef = 0x10, ElementValueType = 0x11, ElementClass = 0x12, ElementVar = 0x13,
  ElementArray = 0x14, ElementFunctionPointer = 0x1b, ElementSzArray = 0x1d, ElementMethodVar = 0x1e,
};
// Bounds for hostile data: real instantiations are a few types wide and deep.
constexpr unsigned MaxDepth = 16, MaxTypeArguments = 64;
constexpr size_t MaxNameLength = 16384;

bool isTypeDesc(uint64_t typeHandle) { return typeHandle & TypeDescTag; }

// "[,]" for rank 2: a comma between each two dimensions.
std::string arrayDimensions(unsigned rank) {
  std::string text = "[";
  text.append(rank - 1, ',');
  return text += ']';
}

} // namespace

// What the formatters need of one TypeHandle.
struct TypeNames::TypeInfo {
  uint8_t elementType = 0;  // SigFormat's: ElementClass for classes and strings
  uint64_t module = 0;      // whose metadata names it and whose assembly it is in
  uint32_t token = 0;       // the TypeDef, or the GenericParam of a generic parameter
  uint64_t methodTable = 0; // 0 for a TypeDesc
  uint64_t element = 0;     // arrays, pointers and byrefs: the type they are of
  unsigned rank = 0;        // ElementArray
  bool generic = false;     // a generic type (its instantiation may be the typical one)
  bool typical = false;     // instantiated at its own parameters: List<T>
};

Expected<TypeNames::TypeInfo> TypeNames::inspect(uint64_t typeHandle, unsigned depth) {
  if (depth > MaxDepth) return fail("the type at " + hex(typeHandle) + " nests more than " + std::to_string(MaxDepth) + " deep");
  if (typeHandle == 0) return fail("a null TypeHandle");
  return isTypeDesc(typeHandle) ? inspectTypeDesc(typeHandle & ~TypeDescTag, depth) : inspectMethodTable(typeHandle);
}

Expected<TypeNames::TypeDef> TypeNames::typeDefOf(uint64_t methodTable) {
  auto module = data_.pointer(methodTable, "MethodTable", "Module");
  if (!module) return module.takeError();
  auto flags2 = data_.value<uint32_t>(methodTable, "MethodTable", "MTFlags2");
  if (!flags2) return flags2.takeError();
  return TypeDef{*module, TypeDefTable | *flags2 >> 8}; // MTFlags2 holds the TypeDef row above 8 flag bits
}

Expected<TypeNames::TypeInfo> TypeNames::inspectMethodTable(uint64_t methodTable) {
  auto flags = data_.value<uint32_t>(methodTable, "MethodTable", "MTFlags");
  if (!flags) return flags.takeError();
  auto typeDef = typeDefOf(methodTable);
  if (!typeDef) return typeDef.takeError();
  TypeInfo info;
  info.methodTable = methodTable;
  info.module = typeDef->module;
  info.token = typeDef->token;
  bool componentSize = *flags & HasComponentSize;
  info.generic = !componentSize && (*flags & GenericsMask);
  info.typical = !componentSize && (*flags & GenericsMask) == GenericsTypical;
  uint32_t category = *flags & CategoryMask;
  if ((*flags & CategoryArrayMask) == CategoryArray) {
    // An array's PerInstInfo is its element type; a multi-dimensional one's
    // EEClass is an ArrayClass with the rank.
    auto element = data_.pointer(methodTable, "MethodTable", "PerInstInfo");
    if (!element) return element.takeError();
    info.element = *element;
    info.elementType = (*flags & CategoryIfArrayThenSzArray) ? ElementSzArray : ElementArray;
    if (info.elementType == ElementArray) {
      auto classOrCanon = data_.pointer(methodTable, "MethodTable", "EEClassOrCanonMT");
      if (!classOrCanon) return classOrCanon.takeError();
      if (*classOrCanon & CanonMethodTableTag) return fail("the array type at " + hex(methodTable) + " has no EEClass of its own");
      auto rank = data_.value<uint8_t>(*classOrCanon, "ArrayClass", "Rank");
      if (!rank) return rank.takeError();
      if (*rank < 1 || *rank > 32) return fail("the array type at " + hex(methodTable) + " has rank " + std::to_string(*rank));
      info.rank = *rank;
    }
  } else if (category == CategoryTruePrimitive) {
    // Int32 and the like: the EEClass holds their element type.
    auto classOrCanon = data_.pointer(methodTable, "MethodTable", "EEClassOrCanonMT");
    if (!classOrCanon) return classOrCanon.takeError();
    if (*classOrCanon & CanonMethodTableTag) return fail("the primitive type at " + hex(methodTable) + " has no EEClass of its own");
    auto element = data_.value<uint8_t>(*classOrCanon, "EEClass", "InternalCorElementType");
    if (!element) return element.takeError();
    info.elementType = *element;
  } else if (category == CategoryValueType || category == CategoryNullable || category == CategoryPrimitive) {
    info.elementType = ElementValueType;
  } else {
    info.elementType = ElementClass;
  }
  return info;
}

Expected<TypeNames::TypeInfo> TypeNames::inspectTypeDesc(uint64_t typeDesc, unsigned depth) {
  auto typeAndFlags = data_.value<uint32_t>(typeDesc, "TypeDesc", "TypeAndFlags");
  if (!typeAndFlags) return typeAndFlags.takeError();
  TypeInfo info;
  info.elementType = uint8_t(*typeAndFlags);
  switch (info.elementType) {
  case ElementVar:
  case ElementMethodVar: {
    auto module = data_.pointer(typeDesc, "TypeVarTypeDesc", "Module");
    if (!module) return module.takeError();
    auto token = data_.value<uint32_t>(typeDesc, "TypeVarTypeDesc", "Token");
    if (!token) return token.takeError();
    info.module = *module;
    info.token = *token;
    return info;
  }
  case ElementByRef:
  case ElementPointer: {
    auto element = data_.pointer(typeDesc, "ParamTypeDesc", "TypeArg");
    if (!element) return element.takeError();
    auto of = inspect(*element, depth + 1);
    if (!of) return of.takeError();
    info.element = *element;
    info.module = of->module;
    return info;
  }
  case ElementFunctionPointer: return info;
  default:
    return fail("the TypeDesc at " + hex(typeDesc) + " is of kind " + hex(info.elementType) +
                ", which names do not cover");
  }
}

// Both spellings name a generic parameter as its declaration does ("T").
Error TypeNames::appendGenericParameter(std::string &out, const TypeInfo &info) {
  auto metadata = modules_.metadata(info.module);
  if (!metadata) return metadata.takeError();
  auto name = (*metadata)->genericParameterName(info.token);
  if (!name) return fail("the generic parameter " + hex(info.token) + " is not in its module's metadata");
  out += *name;
  return Error::success();
}

Expected<std::vector<uint64_t>> TypeNames::typeHandles(uint64_t address, unsigned count) {
  if (count > MaxTypeArguments) return fail(std::to_string(count) + " type arguments is implausible");
  std::vector<uint64_t> handles;
  for (unsigned i = 0; i < count; ++i) {
    auto handle = data_.readPointer(address + uint64_t(i) * data_.pointerSize(), "a type argument");
    if (!handle) return handle.takeError();
    handles.push_back(*handle);
  }
  return handles;
}

// PerInstInfo points at the dictionaries of the type and of its generic
// ancestors, the type's own last; GenericsDictInfo sits just before them
// (RuntimeTypeSystem.md's GetInstantiation; MethodTable::GetInstantiation
// takes the last dictionary, which is the type's own when ancestors have theirs).
Expected<std::vector<uint64_t>> TypeNames::typeArguments(uint64_t methodTable) {
  auto info = inspectMethodTable(methodTable);
  if (!info) return info.takeError();
  return typeArguments(*info);
}

Expected<std::vector<uint64_t>> TypeNames::typeArguments(const TypeInfo &info) {
  if (!info.generic) return std::vector<uint64_t>{};
  uint64_t methodTable = info.methodTable;
  auto perInstInfo = data_.pointer(methodTable, "MethodTable", "PerInstInfo");
  if (!perInstInfo) return perInstInfo.takeError();
  uint64_t dictInfo = *perInstInfo - data_.pointerSize();
  auto dictionaries = data_.value<uint16_t>(dictInfo, "GenericsDictInfo", "NumDicts");
  if (!dictionaries) return dictionaries.takeError();
  auto count = data_.value<uint16_t>(dictInfo, "GenericsDictInfo", "NumTypeArgs");
  if (!count) return count.takeError();
  if (*dictionaries == 0) return fail("the generic type at " + hex(methodTable) + " has no dictionary");
  auto dictionary = data_.readPointer(*perInstInfo + uint64_t(*dictionaries - 1) * data_.pointerSize(), "a type's dictionary");
  if (!dictionary) return dictionary.takeError();
  return typeHandles(*dictionary, *count);
}

Error TypeNames::appendInstantiation(std::string &out, const std::vector<uint64_t> &typeHandles, unsigned depth) {
  out += '[';
  for (size_t i = 0; i < typeHandles.size(); ++i) {
    if (i) out += ',';
    auto info = inspect(typeHandles[i], depth + 1);
    if (!info) return info.takeError();
    // TypeString brackets an argument only when it names its assembly, which
    // a generic parameter does not.
    bool parameter = info->elementType == ElementVar || info->elementType == ElementMethodVar;
    if (!parameter) out += '[';
    if (Error err = appendReflection(out, typeHandles[i], !parameter, depth + 1)) return err;
    if (!parameter) out += ']';
  }
  out += ']';
  return Error::success();
}

Error TypeNames::appendReflection(std::string &out, uint64_t typeHandle, bool withAssembly, unsigned depth) {
  auto info = inspect(typeHandle, depth);
  if (!info) return info.takeError();
  switch (info->elementType) {
  case ElementSzArray:
  case ElementArray:
  case ElementPointer:
  case ElementByRef:
    if (Error err = appendReflection(out, info->element, false, depth + 1)) return err;
    if (info->elementType == ElementSzArray) out += "[]";
    else if (info->elementType == ElementArray) out += info->rank == 1 ? "[*]" : arrayDimensions(info->rank);
    else out += info->elementType == ElementPointer ? "*" : "&";
    break;
  case ElementVar:
  case ElementMethodVar: return appendGenericParameter(out, *info);
  case ElementFunctionPointer: out += "(fnptr)"; return Error::success();
  default: {
    auto metadata = modules_.metadata(info->module);
    if (!metadata) return metadata.takeError();
    auto name = (*metadata)->typeFullName(info->token);
    if (!name) return fail("the type at " + hex(typeHandle) + " has token " + hex(info->token) + ", which its module's metadata does not define");
    out += *name;
    if (info->generic && !info->typical) {
      auto arguments = typeArguments(*info);
      if (!arguments) return arguments.takeError();
      if (Error err = appendInstantiation(out, *arguments, depth)) return err;
    }
  }
  }
  if (out.size() > MaxNameLength) return fail("the type's name is longer than " + std::to_string(MaxNameLength) + " bytes");
  if (!withAssembly) return Error::success();
  auto metadata = modules_.metadata(info->module);
  if (!metadata) return metadata.takeError();
  auto assembly = (*metadata)->assemblyName();
  if (!assembly) return fail("the assembly of the type at " + hex(typeHandle) + " has no name in its metadata");
  out += ", " + *assembly;
  return Error::success();
}

Error TypeNames::appendSignature(std::string &out, uint64_t typeHandle, unsigned depth) {
  auto info = inspect(typeHandle, depth);
  if (!info) return info.takeError();
  if (const char *primitive = EcmaMetadata::primitiveTypeName(info->elementType)) {
    out += primitive;
    return Error::success();
  }
  switch (info->elementType) {
  case ElementSzArray:
  case ElementArray:
  case ElementPointer:
  case ElementByRef:
    if (Error err = appendSignature(out, info->element, depth + 1)) return err;
    if (info->elementType == ElementSzArray) out += "[]";
    else if (info->elementType == ElementArray) out += arrayDimensions(info->rank);
    else out += info->elementType == ElementPointer ? "*" : " ByRef";
    return Error::success();
  case ElementVar:
  case ElementMethodVar: return appendGenericParameter(out, *info);
  case ElementValueType:
  case ElementClass: {
    auto name = typeDefName(info->methodTable);
    if (!name) return name.takeError();
    out += *name;
    if (!info->generic) return Error::success();
    auto arguments = typeArguments(*info);
    if (!arguments) return arguments.takeError();
    out += '<';
    for (size_t i = 0; i < arguments->size(); ++i) {
      if (i) out += ',';
      if (Error err = appendSignature(out, (*arguments)[i], depth + 1)) return err;
    }
    out += '>';
    if (out.size() > MaxNameLength) return fail("the type's name is longer than " + std::to_string(MaxNameLength) + " bytes");
    return Error::success();
  }
  default: return fail("the type at " + hex(typeHandle) + " is of element type " + hex(info->elementType) + ", which signatures do not name");
  }
}

// From typeDefOf, not from all that inspectMethodTable reads (a reverse
// P/Invoke stub's stored signature names System.Void by its MethodTable for
// each void*, and its parameters were lost in normal and triage dumps).
Expected<std::string> TypeNames::typeDefName(uint64_t methodTable) {
  if (isTypeDesc(methodTable)) return fail("the TypeHandle " + hex(methodTable) + " is not a MethodTable");
  auto flags = data_.value<uint32_t>(methodTable, "MethodTable", "MTFlags");
  if (!flags) return flags.takeError();
  if ((*flags & CategoryArrayMask) == CategoryArray) return fail("the MethodTable at " + hex(methodTable) + " is an array's, which no TypeDef names");
  auto typeDef = typeDefOf(methodTable);
  if (!typeDef) return typeDef.takeError();
  auto metadata = modules_.metadata(typeDef->module);
  if (!metadata) return metadata.takeError();
  auto name = (*metadata)->namespaceDotName(typeDef->token);
  if (!name) return fail("the type at " + hex(methodTable) + " has token " + hex(typeDef->token) + ", which its module's metadata does not define");
  return *name;
}

Expected<std::string> TypeNames::reflectionName(uint64_t typeHandle) {
  std::string out;
  if (Error err = appendReflection(out, typeHandle, false, 0)) return err;
  return out;
}

Expected<std::string> TypeNames::instantiation(const std::vector<uint64_t> &typeHandles) {
  std::string out;
  if (Error err = appendInstantiation(out, typeHandles, 0)) return err;
  return out;
}

Expected<std::string> TypeNames::signatureName(uint64_t typeHandle) {
  std::string out;
  if (Error err = appendSignature(out, typeHandle, 0)) return err;
  return out;
}

} // namespace stackwalk::frames
