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

// Follows AT_PHDR -> PT_DYNAMIC -> DT_DEBUG -> r_debug -> link_map. Bounded,
// and stops with a warning at a cycle or unreadable memory.
std::vector<Module> modulesFromLinkMap(uint64_t atPhdr, const std::string &executablePath,
                                       const MemorySource &memory,
                                       std::vector<std::string> &warnings);

// The vDSO at AT_SYSINFO_EHDR, as an image copied from the dump.
std::optional<Module> vdsoModule(uint64_t address, uint64_t mappingEnd, const MemorySource &memory);

} // namespace stackwalk::elfcore
