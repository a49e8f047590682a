#include "stackwalk/frames/DotnetRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

namespace stackwalk::frames {
namespace {

// Environment.Version's way: System.Private.CoreLib's
// [AssemblyInformationalVersion] ("10.0.12-servicing.26422.108+commit") up to
// the first '-', '+' or ' ', CoreLib found as typeof(object).Assembly is:
// System.Object's MethodTable, its Module.
std::string coreLibVersion(const RuntimeData &data, MethodNames &names) {
  auto objectType = data.globalPointer("ObjectMethodTable");
  if (!objectType) return llvm::consumeError(objectType.takeError()), "";
  auto module = data.pointer(*objectType, "MethodTable", "Module");
  if (!module) return llvm::consumeError(module.takeError()), "";
  const EcmaMetadata *metadata = names.metadata(*module);
  auto informational = metadata ? metadata->assemblyInformationalVersion() : std::nullopt;
  if (!informational) return "";
  llvm::StringRef text(*informational);
  return text.take_front(text.find_first_of("-+ ")).str();
}

// Without CoreLib's metadata: a shared runtime's folder is named after its
// version; else the runtime module's "@(#)Version 10.0.1225.60609 @Commit: ..."
// (its SCCS id), which is the file version (the runtime's build), not the
// product version.
std::string runtimeModuleVersion(const Target &target, const ContractDescriptor &descriptor) {
  for (const Module &module : target.modules) {
    if (module.name != descriptor.origin().module) continue;
    // The Windows path style splits at both / and \, for dumps of either OS.
    constexpr auto AnySeparator = llvm::sys::path::Style::windows;
    llvm::StringRef last =
        llvm::sys::path::filename(llvm::sys::path::parent_path(module.recordedPath, AnySeparator), AnySeparator);
    if (!last.empty() && llvm::isDigit(last.front()) && last.count('.') >= 2) return last.str();
    if (!module.image) return "";
    for (const char *name : {".rodata", ".rdata"}) {
      auto section = module.image->section(name);
      if (!section) continue;
      size_t at = section->data.find("@(#)Version ");
      if (at == llvm::StringRef::npos) continue;
      return section->data.substr(at + 12).split(' ').first.str();
    }
  }
  return "";
}

} // namespace

DotnetRuntime::DotnetRuntime(const Target &target, ContractDescriptor descriptor)
    : descriptor_(std::move(descriptor)), data_(target, descriptor_), code_(data_), names_(data_) {
  version_ = coreLibVersion(data_, names_);
  if (version_.empty()) version_ = runtimeModuleVersion(target, descriptor_);
}

llvm::Expected<std::unique_ptr<DotnetRuntime>> DotnetRuntime::open(const Target &target) {
  auto descriptor = ContractDescriptor::locate(target);
  if (!descriptor) return descriptor.takeError();
  return std::unique_ptr<DotnetRuntime>(new DotnetRuntime(target, std::move(*descriptor)));
}

const RuntimeThreadList &DotnetRuntime::threads() {
  if (!threads_) threads_ = readRuntimeThreads(data_);
  return *threads_;
}

const RuntimeThread *DotnetRuntime::threadByOsId(uint64_t osId) {
  for (const RuntimeThread &thread : threads().threads)
    if (thread.osId == osId) return &thread;
  return nullptr;
}

} // namespace stackwalk::frames
