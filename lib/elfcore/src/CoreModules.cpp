#include "stackwalk/elfcore/CoreModules.h"

#include "stackwalk/core/ElfNotes.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cstring>
#include <set>

using llvm::ELF::Elf64_Ehdr;
using llvm::ELF::Elf64_Phdr;

namespace stackwalk::elfcore {
namespace {

constexpr size_t MaxProgramHeaders = 256;
constexpr size_t MaxNoteBytes = 64 * 1024;
constexpr size_t MaxLinkMapEntries = 4096;
constexpr size_t MaxVdsoBytes = 64 * 1024;
constexpr size_t MaxDynamicEntries = 4096;

// The program headers of an ELF image mapped at `base`, read from memory.
std::optional<std::vector<Elf64_Phdr>> programHeadersAt(const MemorySource &memory, uint64_t base) {
  auto header = memory.readValue<Elf64_Ehdr>(base);
  if (!header || std::memcmp(header->e_ident, llvm::ELF::ElfMagic, 4) != 0 ||
      header->e_ident[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      header->e_phentsize != sizeof(Elf64_Phdr) || header->e_phnum > MaxProgramHeaders)
    return std::nullopt;
  std::vector<Elf64_Phdr> phdrs(header->e_phnum);
  std::span<uint8_t> bytes(reinterpret_cast<uint8_t *>(phdrs.data()), phdrs.size() * sizeof(Elf64_Phdr));
  if (!memory.read(base + header->e_phoff, bytes)) return std::nullopt;
  return phdrs;
}

uint64_t lowestLoadAddress(const std::vector<Elf64_Phdr> &phdrs) {
  uint64_t lowest = UINT64_MAX;
  for (const Elf64_Phdr &ph : phdrs)
    if (ph.p_type == llvm::ELF::PT_LOAD) lowest = std::min(lowest, ph.p_vaddr & ~uint64_t(0xfff));
  return lowest == UINT64_MAX ? 0 : lowest;
}

// Fills build-id and (when unknown) size from the in-memory program headers
// of a module whose ELF header is at module.base.
void readIdentityFromMemory(Module &module, const MemorySource &memory) {
  auto phdrs = programHeadersAt(memory, module.base);
  if (!phdrs) return;
  uint64_t bias = module.base - lowestLoadAddress(*phdrs);
  uint64_t end = module.base;
  for (const Elf64_Phdr &ph : *phdrs) {
    if (ph.p_type == llvm::ELF::PT_LOAD) end = std::max(end, bias + ph.p_vaddr + ph.p_memsz);
    if (ph.p_type != llvm::ELF::PT_NOTE || !module.buildId.empty() || ph.p_filesz > MaxNoteBytes) continue;
    std::vector<uint8_t> notes(ph.p_filesz);
    if (!memory.read(bias + ph.p_vaddr, notes)) continue;
    auto id = findGnuBuildId(notes);
    module.buildId.assign(id.begin(), id.end());
  }
  if (module.size == 0) module.size = end - module.base;
}

// A PE image (a .NET assembly) mapped by the runtime: its identity from the
// headers in memory, as minidumps record it.
void readPeIdentityFromMemory(Module &module, const MemorySource &memory) {
  auto peOffset = memory.readValue<uint32_t>(module.base + 0x3c);
  if (!peOffset || *peOffset > 4096) return;
  uint64_t pe = module.base + *peOffset;
  auto signature = memory.readValue<uint32_t>(pe);
  auto timeDateStamp = memory.readValue<uint32_t>(pe + 8);
  auto sizeOfImage = memory.readValue<uint32_t>(pe + 24 + 56); // optional header's SizeOfImage
  if (!signature || *signature != 0x4550 || !timeDateStamp || !sizeOfImage) return;
  module.peTimeDateStamp = *timeDateStamp;
  module.peSizeOfImage = *sizeOfImage;
}

Module makeModule(const std::string &path, uint64_t base, uint64_t size) {
  Module module;
  module.recordedPath = path;
  module.name = llvm::sys::path::filename(path).str();
  module.base = base;
  module.size = size;
  return module;
}


// A PE image (a .NET assembly) mapped by the runtime: the mappings of its
// file within SizeOfImage of the headers. The runtime maps an assembly flat
// (as the file) or, for ReadyToRun code, section by section at its RVAs,
// where the sections' page-aligned file offsets restart at 0.
size_t addPeModule(const std::vector<FileMapping> &mappings, size_t i, const MemorySource &memory,
                   std::vector<Module> &modules) {
  const FileMapping &first = mappings[i];
  Module module = makeModule(first.path, first.start, first.end - first.start);
  readPeIdentityFromMemory(module, memory);
  uint64_t end = module.peSizeOfImage ? first.start + *module.peSizeOfImage : first.end;
  size_t j = i + 1;
  while (j < mappings.size() && mappings[j].path == first.path && mappings[j].start < end) ++j;
  module.size = std::max(end, mappings[j - 1].end) - first.start;
  module.flatFileMapping = std::all_of(mappings.begin() + i, mappings.begin() + j,
                                       [&](const FileMapping &m) { return m.start - first.start == m.fileOffset; });
  modules.push_back(std::move(module));
  return j;
}

} // namespace

std::vector<Module> modulesFromFileNote(const std::vector<FileMapping> &mappings, const MemorySource &memory) {
  std::vector<Module> modules;
  for (size_t i = 0; i < mappings.size();) {
    const FileMapping &first = mappings[i];
    char magic[4];
    bool readable = memory.read(first.start, {reinterpret_cast<uint8_t *>(magic), 4});
    if (first.fileOffset == 0 && readable && std::memcmp(magic, "MZ", 2) == 0) {
      i = addPeModule(mappings, i, memory, modules);
      continue;
    }
    // An ELF module is a run of mappings of one file that starts at file offset 0.
    size_t j = i + 1;
    while (j < mappings.size() && mappings[j].path == first.path && mappings[j].fileOffset != 0) ++j;
    uint64_t end = mappings[j - 1].end;
    i = j;
    if (first.fileOffset != 0) continue;
    if (readable && std::memcmp(magic, llvm::ELF::ElfMagic, 4) != 0) continue; // a data file
    Module module = makeModule(first.path, first.start, end - first.start);
    readIdentityFromMemory(module, memory);
    modules.push_back(std::move(module));
  }
  return modules;
}

std::vector<Module> modulesFromLinkMap(uint64_t atPhdr, const std::string &executablePath,
                                       const MemorySource &memory,
                                       std::vector<std::string> &warnings) {
  std::vector<Module> modules;
  // The executable's own program headers are at AT_PHDR; PT_PHDR gives its bias.
  std::vector<Elf64_Phdr> phdrs;
  for (size_t i = 0; i < MaxProgramHeaders; ++i) {
    auto ph = memory.readValue<Elf64_Phdr>(atPhdr + i * sizeof(Elf64_Phdr));
    if (!ph || ph->p_type == llvm::ELF::PT_NULL) break;
    phdrs.push_back(*ph);
  }
  if (phdrs.empty()) {
    warnings.push_back("the executable's program headers are not in the dump either: its file is placed by the "
                       "entry point");
    return modules;
  }
  auto phdrEntry = std::find_if(phdrs.begin(), phdrs.end(), [](const Elf64_Phdr &p) { return p.p_type == llvm::ELF::PT_PHDR; });
  auto dynamic = std::find_if(phdrs.begin(), phdrs.end(), [](const Elf64_Phdr &p) { return p.p_type == llvm::ELF::PT_DYNAMIC; });
  if (phdrEntry == phdrs.end() || dynamic == phdrs.end()) {
    warnings.push_back("no NT_FILE note and no dynamic section: the module list is unknown");
    return modules;
  }
  uint64_t bias = atPhdr - phdrEntry->p_vaddr;
  Module executable = makeModule(executablePath, bias + lowestLoadAddress(phdrs), 0);
  readIdentityFromMemory(executable, memory);
  modules.push_back(std::move(executable));
  std::vector<Module> libraries = sharedLibrariesFromDynamic(bias + dynamic->p_vaddr, memory, warnings);
  std::move(libraries.begin(), libraries.end(), std::back_inserter(modules));
  return modules;
}

std::vector<uint8_t> dynamicSectionAt(uint64_t address, const MemorySource &memory) {
  std::vector<uint8_t> bytes;
  for (size_t n = 0; n < MaxDynamicEntries; ++n) {
    std::array<uint8_t, 16> entry;
    if (!memory.read(address + n * entry.size(), entry)) break;
    bytes.insert(bytes.end(), entry.begin(), entry.end());
    if (entry == std::array<uint8_t, 16>{}) break; // DT_NULL, 0
  }
  return bytes;
}

std::vector<Module> sharedLibrariesFromDynamic(uint64_t dynamicAddress, const MemorySource &memory,
                                               std::vector<std::string> &warnings) {
  std::vector<Module> modules;
  std::optional<uint64_t> rDebug;
  for (uint64_t at = dynamicAddress, n = 0; n < MaxDynamicEntries; ++n, at += 16) {
    auto tag = memory.readValue<int64_t>(at);
    if (!tag || *tag == llvm::ELF::DT_NULL) break;
    if (*tag == llvm::ELF::DT_DEBUG) rDebug = memory.readValue<uint64_t>(at + 8);
  }
  if (!rDebug || *rDebug == 0) {
    warnings.push_back("no NT_FILE note and DT_DEBUG is unset: the module list is unknown");
    return modules;
  }
  // struct r_debug { int r_version; link_map *r_map; ... }
  // struct link_map { l_addr, l_name, l_ld, l_next, l_prev }
  auto entry = memory.readValue<uint64_t>(*rDebug + 8);
  std::set<uint64_t> visited;
  while (entry && *entry != 0) {
    if (!visited.insert(*entry).second || visited.size() > MaxLinkMapEntries) {
      warnings.push_back("the link map loops or is too long; its remaining entries are ignored");
      break;
    }
    auto loadBias = memory.readValue<uint64_t>(*entry);
    auto namePointer = memory.readValue<uint64_t>(*entry + 8);
    auto dynamic = memory.readValue<uint64_t>(*entry + 16);
    if (!loadBias || !namePointer || !dynamic) {
      warnings.push_back("a link map entry is unreadable; the module list is incomplete");
      break;
    }
    std::string name = memory.readCString(*namePointer, 4096).value_or("");
    // The main program's entry has an empty name; the vDSO is found from auxv.
    if (!name.empty() && name.rfind("linux-vdso", 0) != 0) {
      // Shared objects link at 0, so the bias is where the ELF header is.
      Module module = makeModule(name, *loadBias, 0);
      readIdentityFromMemory(module, memory);
      if (module.buildId.empty()) {
        module.dynamicAddress = *dynamic;
        module.dynamicSection = dynamicSectionAt(*dynamic, memory);
      }
      modules.push_back(std::move(module));
    }
    entry = memory.readValue<uint64_t>(*entry + 24);
  }
  return modules;
}

std::optional<Module> vdsoModule(uint64_t address, uint64_t mappingEnd, const MemorySource &memory) {
  if (mappingEnd <= address) return std::nullopt;
  auto image = ModuleImage::fromMemory(memory, address, std::min<uint64_t>(mappingEnd - address, MaxVdsoBytes), "[vdso]");
  if (!image) {
    llvm::consumeError(image.takeError());
    return std::nullopt;
  }
  Module module = makeModule("[vdso]", address, 0);
  module.name = "linux-vdso.so.1";
  readIdentityFromMemory(module, memory);
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  module.imageNote = "copied from the dump's memory";
  return module;
}

} // namespace stackwalk::elfcore
