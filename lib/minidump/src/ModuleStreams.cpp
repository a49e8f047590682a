// ModuleList (with CodeView records and version info) and UnloadedModuleList.
#include "Streams.h"

#include "stackwalk/core/ModuleImage.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdio>

namespace stackwalk::minidump {
namespace {

constexpr uint32_t RSDS = 0x53445352, NB10 = 0x3031424e, BpEL = 0x4270454c;
constexpr uint32_t VersionSignature = 0xFEEF04BD;

// The file name of a Windows or POSIX path.
std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of("\\/");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string cString(std::span<const uint8_t> bytes) {
  std::string out(bytes.begin(), bytes.end());
  return out.substr(0, out.find('\0'));
}

// Reads the CodeView record into the module's identity: a PDB's GUID and age
// as symbol stores spell them (RSDS), an old PDB signature (NB10), or an ELF
// build-id (Breakpad's BpEL).
void readCodeView(const Reader &reader, const llvm::minidump::Module &raw, Module &module) {
  std::span<const uint8_t> record = reader.slice(raw.CvRecord, module.name + "'s CodeView record");
  auto signature = reader.read<uint32_t>(record, 0);
  if (!signature) return;
  char buffer[64];
  if (*signature == RSDS && record.size() >= 24) {
    module.debugId = pdbDebugId(std::span<const uint8_t, 16>(record.data() + 4, 16), *reader.read<uint32_t>(record, 20));
    module.codeViewGuid.assign(record.begin() + 4, record.begin() + 20);
    module.debugFile = cString(record.subspan(24));
  } else if (*signature == NB10 && record.size() >= 16) {
    std::snprintf(buffer, sizeof buffer, "%08X%X", *reader.read<uint32_t>(record, 8), *reader.read<uint32_t>(record, 12));
    module.debugId = buffer;
    module.debugFile = cString(record.subspan(16));
  } else if (*signature == BpEL) {
    module.buildId.assign(record.begin() + 4, record.end());
  }
}

std::string versionString(const llvm::minidump::VSFixedFileInfo &info) {
  if (info.Signature != VersionSignature) return "";
  uint32_t high = info.FileVersionHigh, low = info.FileVersionLow;
  return std::to_string(high >> 16) + "." + std::to_string(high & 0xffff) + "." + std::to_string(low >> 16) + "." +
         std::to_string(low & 0xffff);
}

Module moduleFrom(const Reader &reader, uint64_t base, uint32_t size, uint32_t timeDateStamp, uint32_t nameRva) {
  Module module;
  module.recordedPath = reader.string(nameRva).value_or("");
  module.name = baseName(module.recordedPath);
  if (module.name.empty()) module.name = "module@0x" + llvm::utohexstr(base, true);
  module.base = base;
  module.size = size;
  if (timeDateStamp || size) {
    module.peTimeDateStamp = timeDateStamp;
    module.peSizeOfImage = size;
  }
  return module;
}

} // namespace

std::vector<Module> readModules(const Reader &reader) {
  std::vector<Module> modules;
  auto stream = reader.stream(StreamType::ModuleList);
  if (!stream) {
    reader.warn("no ModuleList stream");
    return modules;
  }
  for (const llvm::minidump::Module &raw : reader.list<llvm::minidump::Module>(*stream, "ModuleList")) {
    Module module = moduleFrom(reader, raw.BaseOfImage, raw.SizeOfImage, raw.TimeDateStamp, raw.ModuleNameRVA);
    readCodeView(reader, raw, module);
    module.version = versionString(raw.VersionInfo);
    // An ELF module (Breakpad) has a build-id and no PE identity.
    if (!module.buildId.empty()) module.peTimeDateStamp = module.peSizeOfImage = std::nullopt;
    modules.push_back(std::move(module));
  }
  // Writers list the main executable first.
  if (!modules.empty()) modules.front().isMainExecutable = true;
  return modules;
}

std::vector<Module> readUnloadedModules(const Reader &reader) {
  // Entries: BaseOfImage u64, SizeOfImage, CheckSum, TimeDateStamp, ModuleNameRva.
  std::vector<Module> modules;
  auto stream = reader.stream(StreamType::UnloadedModuleList);
  if (!stream) return modules;
  for (std::span<const uint8_t> entry : reader.sizedEntries(*stream, /*count64=*/false, 24, "UnloadedModuleList"))
    modules.push_back(moduleFrom(reader, *reader.read<uint64_t>(entry, 0), *reader.read<uint32_t>(entry, 8),
                                 *reader.read<uint32_t>(entry, 16), *reader.read<uint32_t>(entry, 20)));
  return modules;
}

} // namespace stackwalk::minidump
