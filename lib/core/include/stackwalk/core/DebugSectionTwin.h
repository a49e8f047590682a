// A debug file's DWARF sections, decompressed, as an ELF file of their own.
//
// LLVM's DWARFContext inflates every compressed section of a file when it is
// made (with zlib), whatever the walk then reads: libc's debug file is 4 MB
// of zlib that took 35-40 ms, most of a small dump's walk. The Symbolizer
// makes the context on this twin instead: inflated by libdeflate (about
// three times zlib's speed on the same streams; zstd sections by LLVM's
// zstd), kept in memory, or on disk by DecompressedDebugCache and mapped.
#pragma once

#include "stackwalk/core/ModuleImage.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stackwalk {

// Which .debug_* sections a twin holds: all, or all but the location lists
// (.debug_loc, .debug_loclists), which only readers of variables use (--args)
// and which are a third of the time libc's debug file takes to inflate.
enum class TwinSections { All, WithoutLocationLists };

// Whether an ELF file has a compressed section (SHF_COMPRESSED).
bool hasCompressedSection(const ModuleImage &file);

// The twin of a linked little-endian ELF file (either class; the twin is of its class) with compressed
// sections: an ELF header, its .debug_* sections decompressed back to back,
// their names and a section table. An error when it has no compressed
// section, when its sections claim more than maxDebugBytes uncompressed
// (ModuleImage::debugInfoBytes), or they cannot be read. Its memory is
// written once (not cleared first) and, being tens of MiB for libc, asks for
// transparent huge pages: a page fault per 4 KiB was a tenth of a cold walk.
llvm::Expected<std::unique_ptr<llvm::WritableMemoryBuffer>>
debugSectionTwin(const ModuleImage &file, uint64_t maxDebugBytes, TwinSections which = TwinSections::All,
                 const std::string &name = "twin");
// The same as an image named `name`; null when there is no twin to make.
std::unique_ptr<ModuleImage> debugSectionTwinImage(const ModuleImage &file, uint64_t maxDebugBytes,
                                                   const std::string &name, TwinSections which = TwinSections::All);

} // namespace stackwalk
