#include "stackwalk/elfcore/ExecutableByEntry.h"

#include "stackwalk/elfcore/CoreModules.h"
#include "stackwalk/elfcore/CoreNotes.h"
#include "stackwalk/elfcore/UnwrittenDataIdentity.h"

#include "stackwalk/core/DynamicSectionIdentity.h"
#include "stackwalk/core/Hex.h"

#include "llvm/Object/ELFObjectFile.h"

#include "llvm/Support/Path.h"

#include <iterator>

namespace stackwalk::elfcore {
namespace {

bool needsPlacing(const Target &target, uint64_t entry) {
  if (target.os() != OS::Linux || target.format() != "elf-core") return false;
  for (const Module &module : target.modules)
    if (module.isMainExecutable || module.contains(entry)) return false;
  return true;
}

// The executable as the process ran it: the path AT_EXECFN records, else the
// name prpsinfo does (the resolver also tries -e).
Module executableModule(const Target &target) {
  Module executable;
  executable.isMainExecutable = true;
  if (auto execfn = auxvValue(target.process.auxv, AT_EXECFN))
    executable.recordedPath = target.readCString(*execfn).value_or("");
  if (executable.recordedPath.empty()) executable.recordedPath = target.process.name;
  executable.name = llvm::sys::path::filename(executable.recordedPath).str();
  return executable;
}

// The dump's memory and, where it has nothing, the executable's file at its
// load bias. qemu-user's cores leave out read-only segments, and the link map
// names the dynamic linker by a string in the executable's .interp: read from
// the dump alone, the dynamic linker's entry had no name and was dropped.
class DumpThenExecutable : public MemorySource {
public:
  DumpThenExecutable(const Target &target, const ModuleImage &image, uint64_t bias)
      : target_(target), image_(image), bias_(bias) {}
  bool read(uint64_t address, std::span<uint8_t> out) const override {
    return target_.read(address, out) || image_.readAtFileAddress(address - bias_, out);
  }

private:
  const Target &target_;
  const ModuleImage &image_;
  uint64_t bias_;
};

// A static executable (no dynamic section, so no libraries): loaded where it
// was linked, as its entry point must show, and checked by what the dump holds
// of its read-only data. Empty when placed, else why not.
std::string placeStaticExecutable(Target &target, Module executable, std::shared_ptr<ModuleImage> image,
                                  uint64_t entry, uint64_t fileEntry) {
  const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&image->object());
  if (!elf || elf->getEType() != llvm::ELF::ET_EXEC) return "has no dynamic section";
  if (entry != fileEntry) return "is not the dump's (its entry point is " + hex(fileEntry) + ", not " + hex(entry) + ")";
  if (auto mismatch = unwrittenDataMismatch(target, *image, 0)) return "is not the dump's (" + *mismatch + ")";
  executable.base = image->preferredBase();
  executable.image = std::move(image);
  executable.imageNote = "identity checked by its read-only data only: the dump records no build-id";
  target.modules.push_back(std::move(executable));
  target.sortModules();
  return "";
}

} // namespace

void placeModulesByEntryPoint(Target &target, const ModuleResolver &resolver) {
  std::optional<uint64_t> entry = auxvValue(target.process.auxv, AT_ENTRY);
  if (!entry || !needsPlacing(target, *entry)) return;
  Module executable = executableModule(target);
  std::shared_ptr<ModuleImage> image = resolver.findImage(executable);
  auto fileEntry = image ? image->object().getStartAddress() : llvm::Expected<uint64_t>(uint64_t(0));
  auto dynamic = image ? image->section(".dynamic") : std::nullopt;
  auto unplaced = [&](const std::string &why) {
    target.warnings.push_back("the executable " + (image ? image->path() : executable.recordedPath) + " " + why +
                              ": the module list is unknown");
  };
  if (!image || !fileEntry) {
    if (!fileEntry) llvm::consumeError(fileEntry.takeError());
    return unplaced(image ? "has no entry point" : "was not found (give it with -e)");
  }
  if (!dynamic) {
    if (std::string why = placeStaticExecutable(target, executable, image, *entry, *fileEntry); !why.empty())
      unplaced(why);
    return;
  }
  // The load bias; the file is checked against the dump by the resolver.
  uint64_t bias = *entry - *fileEntry;
  executable.base = bias + image->preferredBase();
  executable.dynamicAddress = bias + dynamic->address;
  executable.dynamicSection = dynamicSectionAt(executable.dynamicAddress, target, pointerSize(target.arch()));
  // Its dynamic section leads to the libraries: only the right file's does.
  if (auto mismatch = dynamicSectionMismatch(executable, *image)) return unplaced("is not the dump's (" + *mismatch + ")");
  executable.imageNote.clear();
  std::vector<Module> libraries = sharedLibrariesFromDynamic(
      executable.dynamicAddress, DumpThenExecutable(target, *image, bias), pointerSize(target.arch()), target.warnings);
  target.modules.push_back(std::move(executable));
  std::move(libraries.begin(), libraries.end(), std::back_inserter(target.modules));
  target.sortModules();
}

} // namespace stackwalk::elfcore
