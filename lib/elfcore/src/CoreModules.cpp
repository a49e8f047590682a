#include "stackwalk/elfcore/CoreModules.h"

#include "stackwalk/core/ElfHeaders.h"
#include "stackwalk/core/ElfNotes.h"
#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <cstring>
#include <set>

namespace stackwalk::elfcore {
namespace {

constexpr size_t MaxProgramHeaders = 256;
constexpr size_t MaxNoteBytes = 64 * 1024;
constexpr size_t MaxLinkMapEntries = 4096;
constexpr size_t MaxVdsoBytes = 64 * 1024;
constexpr size_t MaxDynamicEntries = 4096;

// Fills build-id and (when unknown) size from the in-memory program headers
// of a module whose ELF header is at module.base.
void readIdentityFromMemory(Module &module, const MemorySource &memory) {
  std::optional<ElfImageHeaders> headers = readElfHeaders(memory, module.base, MaxProgramHeaders);
  if (!headers) return;
  uint64_t bias = module.base - lowestLoadAddress(headers->programHeaders);
  uint64_t end = module.base;
  for (const ElfProgramHeader &ph : headers->programHeaders) {
    if (ph.type == llvm::ELF::PT_LOAD) end = std::max(end, bias + ph.vaddr + ph.memsz);
    if (ph.type != llvm::ELF::PT_NOTE || !module.buildId.empty() || ph.filesz > MaxNoteBytes) continue;
    std::vector<uint8_t> notes(ph.filesz);
    if (!memory.read(bias + ph.vaddr, notes)) continue;
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
  module.name = llvm::sys::path::filename(withoutDeletedMark(path)).str();
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
    // An ELF module is a run of mappings of one file that starts at file offset 0
    // and, where its program headers are in the dump, starts within their PT_LOAD
    // extent: a process may map part of the file again far away (node remaps its
    // text), and the anonymous mappings between (a JIT's code) are not in the note.
    bool elf = first.fileOffset == 0 && (!readable || std::memcmp(magic, llvm::ELF::ElfMagic, 4) == 0);
    Module module = makeModule(first.path, first.start, 0);
    if (elf) readIdentityFromMemory(module, memory); // the PT_LOAD extent as its size, when known
    uint64_t limit = module.size ? first.start + module.size : UINT64_MAX;
    size_t j = i + 1;
    while (j < mappings.size() && mappings[j].path == first.path && mappings[j].fileOffset != 0 &&
           mappings[j].start < limit)
      ++j;
    module.size = mappings[j - 1].end - first.start;
    i = j;
    if (elf) modules.push_back(std::move(module)); // not a data file, nor a file mapped from its middle
  }
  return modules;
}

std::vector<Module> modulesFromLinkMap(const ExecutableProgramHeaders &headers, const std::string &executablePath,
                                       const MemorySource &memory, std::vector<std::string> &warnings) {
  std::vector<Module> modules;
  // The executable's own program headers are at AT_PHDR; PT_PHDR gives its bias.
  std::vector<ElfProgramHeader> phdrs;
  size_t entrySize = elfProgramHeaderSize(headers.wordSize);
  std::vector<uint8_t> entry(entrySize);
  for (size_t i = 0; i < std::min<uint64_t>(headers.count.value_or(MaxProgramHeaders), MaxProgramHeaders); ++i) {
    if (!memory.read(headers.address + i * entrySize, entry)) break;
    ElfProgramHeader ph = parseElfProgramHeader(entry, headers.wordSize);
    if (ph.type == llvm::ELF::PT_NULL) break;
    phdrs.push_back(ph);
  }
  if (phdrs.empty()) {
    warnings.push_back("the executable's program headers are not in the dump either: its file is placed by the "
                       "entry point");
    return modules;
  }
  auto ofType = [&](uint32_t type) {
    return std::find_if(phdrs.begin(), phdrs.end(), [&](const ElfProgramHeader &p) { return p.type == type; });
  };
  auto phdrEntry = ofType(llvm::ELF::PT_PHDR), dynamic = ofType(llvm::ELF::PT_DYNAMIC);
  if (dynamic == phdrs.end() && phdrEntry == phdrs.end()) {
    // A static executable, linked where it runs: nothing else is loaded.
    Module executable = makeModule(executablePath, lowestLoadAddress(phdrs), 0);
    readIdentityFromMemory(executable, memory);
    modules.push_back(std::move(executable));
    return modules;
  }
  if (phdrEntry == phdrs.end() || dynamic == phdrs.end()) {
    warnings.push_back("no NT_FILE note and no dynamic section: the module list is unknown");
    return modules;
  }
  uint64_t bias = headers.address - phdrEntry->vaddr;
  Module executable = makeModule(executablePath, bias + lowestLoadAddress(phdrs), 0);
  readIdentityFromMemory(executable, memory);
  modules.push_back(std::move(executable));
  std::vector<Module> libraries = sharedLibrariesFromDynamic(bias + dynamic->vaddr, memory, headers.wordSize, warnings);
  std::move(libraries.begin(), libraries.end(), std::back_inserter(modules));
  return modules;
}

std::vector<uint8_t> dynamicSectionAt(uint64_t address, const MemorySource &memory, unsigned wordSize) {
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> entry(2 * wordSize); // d_tag, d_val
  for (size_t n = 0; n < MaxDynamicEntries; ++n) {
    if (!memory.read(address + n * entry.size(), entry)) break;
    bytes.insert(bytes.end(), entry.begin(), entry.end());
    if (std::all_of(entry.begin(), entry.end(), [](uint8_t b) { return b == 0; })) break; // DT_NULL, 0
  }
  return bytes;
}

std::vector<Module> sharedLibrariesFromDynamic(uint64_t dynamicAddress, const MemorySource &memory,
                                               unsigned wordSize, std::vector<std::string> &warnings) {
  std::vector<Module> modules;
  std::optional<uint64_t> rDebug;
  auto word = [&](uint64_t at) { return memory.readPointer(at, wordSize); };
  for (uint64_t at = dynamicAddress, n = 0; n < MaxDynamicEntries; ++n, at += 2 * wordSize) {
    auto tag = word(at);
    if (!tag || *tag == llvm::ELF::DT_NULL) break;
    if (*tag == llvm::ELF::DT_DEBUG) rDebug = word(at + wordSize);
  }
  if (!rDebug || *rDebug == 0) {
    warnings.push_back("no NT_FILE note and DT_DEBUG is unset: the module list is unknown");
    return modules;
  }
  // struct r_debug { int r_version; link_map *r_map; ... }: r_map a word in.
  // struct link_map { l_addr, l_name, l_ld, l_next, l_prev }: words.
  auto entry = word(*rDebug + wordSize);
  std::set<uint64_t> visited;
  while (entry && *entry != 0) {
    if (!visited.insert(*entry).second || visited.size() > MaxLinkMapEntries) {
      warnings.push_back("the link map loops or is too long; its remaining entries are ignored");
      break;
    }
    auto loadBias = word(*entry);
    auto namePointer = word(*entry + wordSize);
    auto dynamic = word(*entry + 2 * wordSize);
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
        module.dynamicSection = dynamicSectionAt(*dynamic, memory, wordSize);
      }
      modules.push_back(std::move(module));
    }
    entry = word(*entry + 3 * wordSize);
  }
  return modules;
}

llvm::Expected<Module> vdsoModule(uint64_t address, uint64_t mappingEnd, const MemorySource &memory) {
  if (mappingEnd <= address) return fail("the vDSO at " + hex(address) + " has no mapping");
  auto image = ModuleImage::fromMemory(memory, address, std::min<uint64_t>(mappingEnd - address, MaxVdsoBytes), "[vdso]");
  if (!image)
    return fail("the vDSO at " + hex(address) + " is not copied from the dump: " + llvm::toString(image.takeError()));
  Module module = makeModule("[vdso]", address, 0);
  module.name = "linux-vdso.so.1";
  readIdentityFromMemory(module, memory);
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  module.imageNote = "copied from the dump's memory";
  return module;
}

} // namespace stackwalk::elfcore
