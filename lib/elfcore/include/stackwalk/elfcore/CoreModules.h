// The modules of a core: from NT_FILE, from the dynamic linker's link map when
// NT_FILE is missing, and the vDSO, whose only copy is in the dump's memory.
#pragma once

#include "stackwalk/elfcore/CoreNotes.h"

#include "stackwalk/core/Module.h"
#include "stackwalk/core/Memory.h"

#include <string>
#include <vector>

namespace stackwalk::elfcore {

std::vector<Module> modulesFromFileNote(const std::vector<FileMapping> &mappings, const MemorySource &memory);

// The executable's program headers as the auxiliary vector places them
// (AT_PHDR, AT_PHNUM), in a process of `wordSize`-byte pointers.
struct ExecutableProgramHeaders {
  uint64_t address = 0;
  std::optional<uint64_t> count; // until a PT_NULL entry when unknown
  unsigned wordSize = 8;
};

// Follows AT_PHDR -> PT_DYNAMIC -> DT_DEBUG -> r_debug -> link_map. Bounded,
// and stops with a warning at a cycle or unreadable memory. Empty, with a
// warning, when the executable's program headers are not in the dump
// (qemu-user leaves them out): then its file places it (ExecutableByEntry).
// A static executable (no PT_DYNAMIC, no PT_PHDR) is the only module.
std::vector<Module> modulesFromLinkMap(const ExecutableProgramHeaders &headers, const std::string &executablePath,
                                       const MemorySource &memory, std::vector<std::string> &warnings);

// The shared libraries of the link map that the dynamic section at
// `dynamicAddress` leads to (DT_DEBUG -> r_debug -> link_map). A library whose
// headers are not in the dump gets the dynamic section its entry points to
// (Module::dynamicSection), the identity left to check its file by; its extent
// comes from the file.
std::vector<Module> sharedLibrariesFromDynamic(uint64_t dynamicAddress, const MemorySource &memory,
                                               unsigned wordSize, std::vector<std::string> &warnings);

// The dynamic section at `address` up to its DT_NULL entry, as far as it can be read (bounded).
std::vector<uint8_t> dynamicSectionAt(uint64_t address, const MemorySource &memory, unsigned wordSize);

// The vDSO at AT_SYSINFO_EHDR, as an image copied from the dump; an error
// saying why when it cannot be (its frames then have no module).
llvm::Expected<Module> vdsoModule(uint64_t address, uint64_t mappingEnd, const MemorySource &memory);

} // namespace stackwalk::elfcore
