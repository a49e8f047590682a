#include "stackwalk/elfcore/ExecutableByEntry.h"

#include "stackwalk/elfcore/CoreModules.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include "stackwalk/core/DynamicSectionIdentity.h"

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

} // namespace

void placeModulesByEntryPoint(Target &target, const ModuleResolver &resolver) {
  std::optional<uint64_t> entry = auxvValue(target.process.auxv, AT_ENTRY);
  if (!entry || !needsPlacing(target, *entry)) return;
  Module executable = executableModule(target);
  std::shared_ptr<ModuleImage> image = resolver.findImage(executable);
  auto fileEntry = image ? image->object().getStartAddress() : llvm::Expected<uint64_t>(uint64_t(0));
  auto dynamic = image ? image->section(".dynamic") : std::nullopt;
  if (!image || !fileEntry || !dynamic) {
    if (!fileEntry) llvm::consumeError(fileEntry.takeError());
    target.warnings.push_back("the executable " + executable.recordedPath +
                              (image ? " has no entry point or dynamic section" : " was not found (give it with -e)") +
                              ": the module list is unknown");
    return;
  }
  // The load bias; the file is checked against the dump by the resolver.
  uint64_t bias = *entry - *fileEntry;
  executable.base = bias + image->preferredBase();
  executable.dynamicAddress = bias + dynamic->address;
  executable.dynamicSection = dynamicSectionAt(executable.dynamicAddress, target, pointerSize(target.arch()));
  // Its dynamic section leads to the libraries: only the right file's does.
  if (auto mismatch = dynamicSectionMismatch(executable, *image)) {
    target.warnings.push_back("the executable " + image->path() + " is not the dump's (" + *mismatch +
                              "): the module list is unknown");
    return;
  }
  executable.imageNote.clear();
  std::vector<Module> libraries = sharedLibrariesFromDynamic(
      executable.dynamicAddress, DumpThenExecutable(target, *image, bias), pointerSize(target.arch()), target.warnings);
  target.modules.push_back(std::move(executable));
  std::move(libraries.begin(), libraries.end(), std::back_inserter(target.modules));
  target.sortModules();
}

} // namespace stackwalk::elfcore
