// A module (executable or shared library) as the process had it loaded.
#pragma once

#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/core/ModuleImage.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stackwalk {

struct Module {
  std::string name;         // file name, e.g. "libc.so.6"
  std::string recordedPath; // path as the dump recorded it
  uint64_t base = 0;        // lowest mapped address
  uint64_t size = 0;        // extent of the mappings
  std::vector<uint8_t> buildId; // ELF GNU build-id as found in dump memory
  std::string debugId;          // PE: PDB GUID and age, as symbol stores name them
  // The GUID of the dump's CodeView (RSDS) record, raw: a PE module's PDB's,
  // or an ELF module's identifier in a Breakpad or Crashpad minidump
  // (ModuleImage::breakpadFileId). Empty when the dump records none.
  std::vector<uint8_t> codeViewGuid;
  std::string debugFile;        // PE: the PDB's name from the CodeView record
  std::optional<uint32_t> peTimeDateStamp, peSizeOfImage; // PE identity
  std::string version;          // file version, "1.2.3.4", where recorded
  // What the module told the crash reporter (Crashpad): messages in order
  // (abort()'s "abort() called"), and named values.
  std::vector<std::string> listAnnotations;
  std::vector<std::pair<std::string, std::string>> annotations;
  // An ELF module's dynamic section as the dump's memory holds it, and where,
  // for a dump that records no build-id (qemu-user's cores leave the headers
  // out): a file must have the same dynamic section there to be used.
  uint64_t dynamicAddress = 0;
  std::vector<uint8_t> dynamicSection;
  bool isMainExecutable = false;
  bool dynamic = false;         // code generated at run time and registered (JIT)
  // The file is mapped as it lies on disk (address - base = file offset),
  // not section by section: how .NET maps IL-only assemblies on Linux.
  bool flatFileMapping = false;

  // The file that was found for it and matched its identity, or null.
  std::shared_ptr<ModuleImage> image;
  std::string imageNote; // why there is no image, or what is doubtful about it
  // The file was used although the dump records no identity to check it
  // against: its names do not go into crash signatures unless asked.
  bool identityUnchecked = false;
  // Every file found for it is data, not an object file: a mapped locale
  // archive or cache (NT_FILE lists every file mapping); no code is missing.
  bool dataFile = false;
  // The dump's budget for debug info was spent before this module's turn:
  // it is named by its symbol tables only (lib/walk's DebugInfoBudget.h).
  bool debugInfoRefused = false;
  // Its Breakpad symbol file (--symbols-path), whose MODULE record matched
  // the dump's debug id; it names frames where the image has no debug info,
  // and its STACK CFI unwinds them.
  std::shared_ptr<const BreakpadSymbolFile> symbolFile;
  // A PE module's PDB found by the dump's CodeView record when its image is
  // not at hand (with an image, ModuleImage::pdbPath): names and lines only.
  std::string pdbPath;
  // An image-less ELF module's exported functions, from its dynamic symbols
  // in the dump's memory (LoadedElf: a full core holds them), by start; each
  // with the frame list that names it.
  struct ExportedFunction {
    uint64_t start, size;
    std::vector<SourceFrame> frames;
  };
  std::vector<ExportedFunction> exportedFunctions;
  // An image-less ELF module whose program headers the dump holds: its
  // PT_LOAD segments, vaddr counted from `base`. They tell its code from its
  // data where the dump records no mapping (gcore leaves read-only file
  // pages out of its cores, and so leaves no PT_LOAD of its own for them).
  std::vector<LoadSegment> segmentsInDump;

  bool contains(uint64_t address) const {
    return address >= base && address - base < size;
  }
  // Where its frames are named from: "pdb", "dwarf", "breakpad", "symtab",
  // "dynsym" (also the dynamic symbols of its image in the dump) or "none".
  std::string_view symbolSource() const;
  // The separate debug file or PDB used for it; empty when none.
  const std::string &debugInfoPath() const { return image ? image->debugInfoPath() : pdbPath; }
  // How Breakpad symbol stores name its symbol file: the debug id (a PE's
  // PDB GUID and age; for ELF and Mach-O, the first 16 bytes of the build-id
  // or UUID as a GUID, age 0) and the debug file's name (the PDB's, else the
  // module's). Empty when the dump records no identity.
  std::string breakpadDebugId() const;
  std::string breakpadDebugFile() const;
  // Runtime address minus this = the image's file address.
  uint64_t loadBias() const { return image ? base - image->preferredBase() : base; }
};

} // namespace stackwalk
