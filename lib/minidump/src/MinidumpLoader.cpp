#include "stackwalk/minidump/MinidumpLoader.h"

#include "MinidumpReader.h"
#include "Streams.h"

#include "stackwalk/core/Auxv.h"

#include <algorithm>
#include <cstring>

namespace stackwalk {

bool looksLikeMinidump(std::span<const uint8_t> head) {
  return head.size() >= 4 && std::memcmp(head.data(), "MDMP", 4) == 0;
}

namespace {

constexpr uint64_t MaxVdsoBytes = 64 * 1024;

// lldb records each ELF module's size as that of its first segment only (the
// ELF headers, without the code): a module whose mapping at its base is of a
// file reaches as far as that file's mappings run on from there.
void extendModulesToTheirMappings(Target &target, const std::vector<minidump::LinuxStreams::FileMapping> &mappings) {
  for (Module &module : target.modules) {
    auto first = std::find_if(mappings.begin(), mappings.end(),
                              [&](const minidump::LinuxStreams::FileMapping &m) { return m.start == module.base; });
    if (first == mappings.end()) continue;
    uint64_t end = first->end;
    for (auto next = first + 1; next != mappings.end() && next->path == first->path && next->start >= end; ++next)
      end = next->end;
    module.size = std::max(module.size, end - module.base);
  }
}

// Linux minidumps (Breakpad, Crashpad, lldb): regions from /proc/PID/maps,
// module extents from them where the writer recorded less, the process from
// status and cmdline, and the vDSO from the dump's memory.
void addLinuxDetails(Target &target, const minidump::LinuxStreams &linux) {
  if (target.regions.empty()) target.regions = linux.maps;
  extendModulesToTheirMappings(target, linux.fileMappings);
  if (!linux.processName.empty()) target.process.name = linux.processName;
  if (!linux.commandLine.empty()) target.process.commandLine = linux.commandLine;
  if (!target.process.pid) target.process.pid = linux.pid;
  if (!linux.distribution.empty())
    target.osVersion = linux.distribution + (target.osVersion.empty() ? "" : " (" + target.osVersion + ")");
  target.process.auxv = linux.auxv;
  for (auto [key, value] : linux.auxv) {
    if (key != AT_SYSINFO_EHDR) continue;
    auto vdso = std::find_if(target.modules.begin(), target.modules.end(), [&](const Module &m) { return m.base == value; });
    if (vdso == target.modules.end() || vdso->image) continue;
    if (auto image = ModuleImage::fromMemory(target, value, std::min<uint64_t>(vdso->size, MaxVdsoBytes), vdso->name)) {
      vdso->image = std::shared_ptr<ModuleImage>(std::move(*image));
      vdso->imageNote = "copied from the dump's memory";
    } else {
      llvm::consumeError(image.takeError());
    }
  }
}

} // namespace

llvm::Expected<std::unique_ptr<Target>> loadMinidump(const std::string &path) {
  auto file = DumpFile::open(path);
  if (!file) return file.takeError();
  return loadMinidump(std::move(*file));
}

llvm::Expected<std::unique_ptr<Target>> loadMinidump(std::shared_ptr<const DumpFile> file) {
  std::vector<std::string> warnings;
  auto reader = minidump::Reader::create(file->bytes(), warnings);
  if (!reader) return reader.takeError();

  minidump::SystemDescription system = minidump::readSystemInfo(*reader);
  auto memory = std::make_unique<DumpedMemory>(file, minidump::readMemoryRanges(*reader));
  auto target = std::make_unique<Target>(system.arch, system.os, "minidump", std::move(memory));
  target->osVersion = system.osVersion;
  target->threads = minidump::readThreads(*reader, system.arch);
  std::optional<RegisterFile> exceptionContext;
  std::optional<FxsaveArea> exceptionFpState;
  target->crash = minidump::readException(*reader, system.os, system.arch, exceptionContext, exceptionFpState,
                                          target->crashUnreadable);
  // Walk the crashed thread from the exception's context, as WinDbg's .ecxr
  // and minidump-stackwalk do: the thread list holds the thread inside the
  // handler that wrote the dump.
  if (target->crash && exceptionContext)
    for (ThreadInfo &thread : target->threads)
      if (thread.tid == target->crash->threadId) {
        thread.context = *exceptionContext;
        thread.fpState = exceptionFpState;
      }
  target->modules = minidump::readModules(*reader);
  target->unloadedModules = minidump::readUnloadedModules(*reader);
  target->regions = minidump::readMemoryInfo(*reader);
  target->process.pid = minidump::readProcessId(*reader);
  if (!target->modules.empty()) target->process.name = target->modules.front().name;
  if (system.os == OS::Linux) addLinuxDetails(*target, minidump::readLinuxStreams(*reader, pointerSize(target->arch())));
  minidump::CrashpadInfo crashpad = minidump::readCrashpadInfo(*reader);
  target->annotations = std::move(crashpad.annotations);
  for (minidump::CrashpadInfo::ModuleAnnotations &annotated : crashpad.modules)
    if (annotated.moduleIndex < target->modules.size()) {
      Module &module = target->modules[annotated.moduleIndex];
      module.listAnnotations = std::move(annotated.list);
      module.annotations = std::move(annotated.named);
    }
  target->assertion = minidump::readAssertion(*reader);
  target->sortModules();
  target->warnings = std::move(warnings);
  return target;
}

} // namespace stackwalk
