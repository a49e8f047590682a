#include "stackwalk/frames/ManagedModules.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

namespace stackwalk::frames {
namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string ManagedModules::modulePath(uint64_t module) {
  // Module.Path points at the file's path in UTF-16 (the runtime's WCHAR).
  auto path = data_.pointer(module, "Module", "Path");
  if (!path || *path == 0) {
    if (!path) llvm::consumeError(path.takeError());
    return "";
  }
  return data_.readUtf16(*path, std::nullopt).value_or("");
}

// The Loader contract: Module -> PEAssembly -> PEImage -> its loaded layout.
llvm::Expected<std::unique_ptr<EcmaMetadata>> ManagedModules::loadMetadata(uint64_t module) {
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

const ManagedModules::Module &ManagedModules::module(uint64_t address) {
  auto it = modules_.find(address);
  if (it != modules_.end()) return it->second;
  Module info;
  info.fileName = baseName(modulePath(address));
  auto metadata = loadMetadata(address);
  if (metadata) info.metadata = std::move(*metadata);
  else info.problem = llvm::toString(metadata.takeError());
  return modules_.emplace(address, std::move(info)).first->second;
}

llvm::Expected<const EcmaMetadata *> ManagedModules::metadata(uint64_t address) {
  const Module &info = module(address);
  if (info.metadata) return info.metadata.get();
  return fail("no metadata for " + (info.fileName.empty() ? hex(address) : info.fileName) + ": " + info.problem);
}

} // namespace stackwalk::frames
