#include "stackwalk/frames/DotnetRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

namespace stackwalk::frames {
namespace {

// The runtime module embeds "@(#)Version 10.0.1225.60609 @Commit: ..." (its
// SCCS id); the file version is the runtime's build, not the product version,
// so the product version comes from the runtime's folder when it has one.
std::string runtimeVersion(const Target &target, const ContractDescriptor &descriptor) {
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
  version_ = runtimeVersion(target, descriptor_);
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
