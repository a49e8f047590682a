#include "stackwalk/frames/MethodNames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include <vector>

using llvm::Expected;

namespace stackwalk::frames {
namespace {

// RuntimeTypeSystem.md: MethodDesc.Flags' classification, InstantiatedMethodDesc.Flags2's
// kind and the dynamic methods' StoredSigMethodDesc.ExtendedFlags.
constexpr uint16_t ClassificationMask = 0x7, ClassificationInstantiated = 5, ClassificationDynamic = 7;
constexpr uint16_t InstantiationKindMask = 0x7, GenericMethodDefinition = 1;
constexpr uint32_t IsLCGMethod = 0x4000, IsILStub = 0x8000;
constexpr uint32_t MethodDefTable = 0x06000000;
// A stored signature is a few dozen bytes; this bounds a hostile length.
constexpr uint32_t MaxStoredSignature = 4096;

// MethodDescChunk.FlagsAndTokenRange holds the token's upper bits and
// MethodDesc.Flags3AndTokenRemainder its lower ones (RuntimeTypeSystem.md).
uint32_t methodToken(uint16_t remainderField, uint16_t rangeField, unsigned remainderBits) {
  unsigned rangeBits = 24 - remainderBits;
  uint32_t remainderMask = 0xFFFFFFu >> rangeBits;
  uint32_t rangeMask = 0xFFFFFFu >> remainderBits;
  return MethodDefTable | ((uint32_t(rangeField) & rangeMask) << remainderBits) | (remainderField & remainderMask);
}

} // namespace

struct MethodNames::MethodDescFields {
  uint64_t address = 0, methodTable = 0, module = 0;
  uint16_t classification = 0;
  uint32_t token = 0; // 0 for a dynamic method
};

Expected<MethodNames::MethodDescFields> MethodNames::readMethodDesc(uint64_t methodDesc) {
  auto chunkIndex = data_.value<uint8_t>(methodDesc, "MethodDesc", "ChunkIndex");
  if (!chunkIndex) return chunkIndex.takeError();
  auto flags = data_.value<uint16_t>(methodDesc, "MethodDesc", "Flags");
  if (!flags) return flags.takeError();
  auto remainder = data_.value<uint16_t>(methodDesc, "MethodDesc", "Flags3AndTokenRemainder");
  if (!remainder) return remainder.takeError();
  auto alignment = data_.global("MethodDescAlignment");
  if (!alignment) return alignment.takeError();
  auto chunkSize = data_.size("MethodDescChunk");
  if (!chunkSize) return chunkSize.takeError();
  uint64_t chunk = methodDesc - uint64_t(*chunkIndex) * *alignment - *chunkSize;
  auto methodTable = data_.pointer(chunk, "MethodDescChunk", "MethodTable");
  if (!methodTable) return methodTable.takeError();
  auto range = data_.value<uint16_t>(chunk, "MethodDescChunk", "FlagsAndTokenRange");
  if (!range) return range.takeError();
  auto module = data_.pointer(*methodTable, "MethodTable", "Module");
  if (!module) return module.takeError();
  if (*module == 0) return fail("the MethodDesc at " + hex(methodDesc) + " does not read back (no Module)");
  MethodDescFields fields{methodDesc, *methodTable, *module, uint16_t(*flags & ClassificationMask), 0};
  if (fields.classification == ClassificationDynamic) return fields;
  auto bits = data_.global("MethodDescTokenRemainderBitCount");
  if (!bits) return bits.takeError();
  if (*bits == 0 || *bits > 24) return fail("MethodDescTokenRemainderBitCount is implausible");
  fields.token = methodToken(*remainder, *range, unsigned(*bits));
  return fields;
}

Expected<ManagedMethod> MethodNames::describe(uint64_t methodDesc) {
  if (auto it = methods_.find(methodDesc); it != methods_.end()) return it->second;
  auto fields = readMethodDesc(methodDesc);
  if (!fields) return fields.takeError();
  ManagedMethod method;
  method.methodDesc = methodDesc;
  method.module = fields->module;
  method.token = fields->token;
  method.moduleName = modules_.module(fields->module).fileName;
  if (fields->classification == ClassificationDynamic) {
    auto name = dynamicMethodName(*fields);
    if (!name) return name.takeError();
    method.name = std::move(*name);
  } else {
    auto metadata = modules_.metadata(fields->module);
    if (!metadata) return metadata.takeError();
    auto name = metadataMethodName(*fields, **metadata);
    if (!name) return name.takeError();
    method.name = std::move(*name);
  }
  methods_[methodDesc] = method;
  return method;
}

// The instantiated name, or when a type of the instantiation does not read
// (a triage dump keeps few runtime pages) the metadata's open form.
Expected<std::string> MethodNames::metadataMethodName(const MethodDescFields &fields, const EcmaMetadata &metadata) {
  auto instantiated = instantiatedName(fields, metadata);
  if (instantiated) return instantiated;
  llvm::consumeError(instantiated.takeError());
  auto name = metadata.methodFullName(fields.token);
  if (!name) return fail("the MethodDesc at " + hex(fields.address) + " has token " + hex(fields.token) +
                         ", which its module's metadata does not define");
  return *name;
}

Expected<std::string> MethodNames::instantiatedName(const MethodDescFields &fields, const EcmaMetadata &metadata) {
  auto owner = types_.reflectionName(fields.methodTable);
  if (!owner) return owner.takeError();
  auto simple = metadata.methodName(fields.token);
  if (!simple) return fail("no method " + hex(fields.token) + " in the metadata");
  std::string name = *owner + "." + *simple;

  auto classArguments = types_.typeArguments(fields.methodTable);
  if (!classArguments) return classArguments.takeError();
  std::vector<uint64_t> methodArguments;
  if (fields.classification == ClassificationInstantiated) {
    auto kind = data_.value<uint16_t>(fields.address, "InstantiatedMethodDesc", "Flags2");
    if (!kind) return kind.takeError();
    auto count = data_.value<uint16_t>(fields.address, "InstantiatedMethodDesc", "NumGenericArgs");
    if (!count) return count.takeError();
    auto perInstInfo = data_.pointer(fields.address, "InstantiatedMethodDesc", "PerInstInfo");
    if (!perInstInfo) return perInstInfo.takeError();
    if (*perInstInfo) {
      auto arguments = types_.typeHandles(*perInstInfo, *count);
      if (!arguments) return arguments.takeError();
      methodArguments = std::move(*arguments);
    }
    // TypeString lists a method's instantiation unless it is the generic
    // method definition itself.
    if ((*kind & InstantiationKindMask) != GenericMethodDefinition && !methodArguments.empty()) {
      auto list = types_.instantiation(methodArguments);
      if (!list) return list.takeError();
      name += *list;
    }
  }

  EcmaMetadata::SignatureContext context;
  for (uint64_t type : *classArguments) {
    auto text = types_.signatureName(type);
    if (!text) return text.takeError();
    context.typeArguments.push_back(std::move(*text));
  }
  for (uint64_t type : methodArguments) {
    auto text = types_.signatureName(type);
    if (!text) return text.takeError();
    context.methodArguments.push_back(std::move(*text));
  }
  if (auto parameters = metadata.methodParameters(fields.token, context)) name += *parameters;
  return name;
}

// TypeString::AppendMethodImpl: a dynamic method's class is DynamicClass for
// a DynamicMethod (LCG) and ILStubClass for an IL stub; its signature is the
// one stored on the MethodDesc, whose types are the runtime's own TypeHandles.
Expected<std::string> MethodNames::dynamicMethodName(const MethodDescFields &fields) {
  auto namePointer = data_.pointer(fields.address, "DynamicMethodDesc", "MethodName");
  if (!namePointer) return namePointer.takeError();
  auto simple = data_.target().readCString(*namePointer, 1024);
  if (!simple) return fail("the dynamic method's name at " + hex(*namePointer) + " is not in the dump");
  auto extended = data_.value<uint32_t>(fields.address, "StoredSigMethodDesc", "ExtendedFlags");
  if (!extended) return extended.takeError();
  const char *owner = (*extended & IsLCGMethod) ? "DynamicClass" : (*extended & IsILStub) ? "ILStubClass" : "";
  std::string name = std::string(owner) + "." + *simple;

  auto signature = data_.pointer(fields.address, "StoredSigMethodDesc", "Sig");
  auto length = data_.value<uint32_t>(fields.address, "StoredSigMethodDesc", "cSig");
  // A DynamicMethod's module is often a dynamic one, without metadata of its
  // own; its signature's types are TypeHandles, which do not need any.
  const EcmaMetadata *metadata = modules_.module(fields.module).metadata.get();
  if (!signature || !length || *length == 0 || *length > MaxStoredSignature) {
    if (!signature) llvm::consumeError(signature.takeError());
    if (!length) llvm::consumeError(length.takeError());
    return name; // named without its parameters, as when a metadata signature does not read
  }
  std::vector<uint8_t> bytes(*length);
  if (!data_.target().read(*signature, bytes)) return name;
  EcmaMetadata::SignatureContext context;
  context.pointerSize = data_.pointerSize();
  context.internalTypeName = [this](uint64_t typeHandle) -> std::optional<std::string> {
    auto text = types_.typeDefName(typeHandle);
    if (text) return *text;
    llvm::consumeError(text.takeError());
    return std::nullopt;
  };
  if (auto parameters = EcmaMetadata::signatureParameters(metadata, bytes, context)) name += *parameters;
  return name;
}

// The type of a MethodTable by its TypeDef (TypeNames::typeDefOf), with its enclosing types.
Expected<std::string> MethodNames::typeName(uint64_t methodTable) {
  auto typeDef = types_.typeDefOf(methodTable);
  if (!typeDef) return typeDef.takeError();
  auto metadata = modules_.metadata(typeDef->module);
  if (!metadata) return metadata.takeError();
  auto name = (*metadata)->typeFullName(typeDef->token);
  if (!name) return fail("the MethodTable at " + hex(methodTable) + " has token " + hex(typeDef->token) + ", which " +
                         modules_.module(typeDef->module).fileName + "'s metadata does not define");
  return *name;
}

} // namespace stackwalk::frames
