#include "stackwalk/frames/MethodNames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

namespace stackwalk::frames {
namespace {

constexpr uint16_t ClassificationMask = 0x7, ClassificationDynamic = 7;
constexpr uint32_t MethodDefTable = 0x06000000, TypeDefTable = 0x02000000;

// MethodDescChunk.FlagsAndTokenRange holds the token's upper bits and
// MethodDesc.Flags3AndTokenRemainder its lower ones (RuntimeTypeSystem.md).
uint32_t methodToken(uint16_t remainderField, uint16_t rangeField, unsigned remainderBits) {
  unsigned rangeBits = 24 - remainderBits;
  uint32_t remainderMask = 0xFFFFFFu >> rangeBits;
  uint32_t rangeMask = 0xFFFFFFu >> remainderBits;
  return MethodDefTable | ((uint32_t(rangeField) & rangeMask) << remainderBits) | (remainderField & remainderMask);
}

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string MethodNames::modulePath(uint64_t module) {
  // Module.Path points at the file's path in UTF-16 (the runtime's WCHAR).
  auto path = data_.pointer(module, "Module", "Path");
  if (!path || *path == 0) {
    if (!path) llvm::consumeError(path.takeError());
    return "";
  }
  return data_.readUtf16(*path, std::nullopt).value_or("");
}

// The Loader contract: Module -> PEAssembly -> PEImage -> its loaded layout.
llvm::Expected<std::unique_ptr<EcmaMetadata>> MethodNames::loadMetadata(uint64_t module) {
  auto assembly = data_.pointer(module, "Module", "PEAssembly");
  if (!assembly) return assembly.takeError();
  auto image = data_.pointer(*assembly, "PEAssembly", "PEImage");
  if (!image) return image.takeError();
  auto layout = data_.pointer(*image, "PEImage", "LoadedImageLayout");
  if (!layout) return layout.takeError();
  if (*layout == 0) return fail("the module's image is not loaded");
  auto base = data_.pointer(*layout, "PEImageLayout", "Base");
  if (!base) return base.takeError();
  // ReadyToRun images are mapped section by section, IL-only ones flat; the
  // metadata's signature tells which reading is right.
  const Target &target = data_.target();
  auto mapped = EcmaMetadata::fromPeImage(target, *base, /*mapped=*/true);
  if (mapped) return std::make_unique<EcmaMetadata>(std::move(*mapped));
  llvm::consumeError(mapped.takeError());
  auto flat = EcmaMetadata::fromPeImage(target, *base, /*mapped=*/false);
  if (!flat) return flat.takeError();
  return std::make_unique<EcmaMetadata>(std::move(*flat));
}

const MethodNames::ModuleInfo &MethodNames::moduleInfo(uint64_t module) {
  auto it = modules_.find(module);
  if (it != modules_.end()) return it->second;
  ModuleInfo info;
  info.fileName = baseName(modulePath(module));
  auto metadata = loadMetadata(module);
  if (metadata) info.metadata = std::move(*metadata);
  else info.problem = llvm::toString(metadata.takeError());
  return modules_.emplace(module, std::move(info)).first->second;
}

llvm::Error MethodNames::noMetadata(uint64_t module, const ModuleInfo &info) {
  return fail("no metadata for " + (info.fileName.empty() ? hex(module) : info.fileName) + ": " + info.problem);
}

// RuntimeTypeSystem.md: MTFlags2 holds the type's TypeDef row above 8 flag bits.
llvm::Expected<std::string> MethodNames::typeName(uint64_t methodTable) {
  auto module = data_.pointer(methodTable, "MethodTable", "Module");
  if (!module) return module.takeError();
  auto flags2 = data_.value<uint32_t>(methodTable, "MethodTable", "MTFlags2");
  if (!flags2) return flags2.takeError();
  const ModuleInfo &info = moduleInfo(*module);
  if (!info.metadata) return noMetadata(*module, info);
  uint32_t token = TypeDefTable | *flags2 >> 8;
  auto name = info.metadata->typeFullName(token);
  if (!name) return fail("the MethodTable at " + hex(methodTable) + " has token " + hex(token) + ", which " +
                                 info.fileName + "'s metadata does not define");
  return *name;
}

llvm::Expected<ManagedMethod> MethodNames::describe(uint64_t methodDesc) {
  if (auto it = methods_.find(methodDesc); it != methods_.end()) return it->second;
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

  ManagedMethod method;
  method.methodDesc = methodDesc;
  method.module = *module;
  const ModuleInfo &info = moduleInfo(*module);
  method.moduleName = info.fileName;
  if ((*flags & ClassificationMask) == ClassificationDynamic) {
    // IL stubs and dynamic methods have no metadata, only a name.
    auto namePointer = data_.pointer(methodDesc, "DynamicMethodDesc", "MethodName");
    if (!namePointer) return namePointer.takeError();
    auto name = data_.target().readCString(*namePointer, 1024);
    if (!name) return fail("the dynamic method's name at " + hex(*namePointer) + " is not in the dump");
    method.name = *name;
  } else {
    auto bits = data_.global("MethodDescTokenRemainderBitCount");
    if (!bits) return bits.takeError();
    if (*bits == 0 || *bits > 24) return fail("MethodDescTokenRemainderBitCount is implausible");
    method.token = methodToken(*remainder, *range, unsigned(*bits));
    if (!info.metadata) return noMetadata(*module, info);
    auto name = info.metadata->methodFullName(method.token);
    if (!name) return fail("the MethodDesc at " + hex(methodDesc) + " has token " + hex(method.token) +
                                   ", which " + info.fileName + "'s metadata does not define");
    method.name = *name;
  }
  methods_[methodDesc] = method;
  return method;
}

} // namespace stackwalk::frames
