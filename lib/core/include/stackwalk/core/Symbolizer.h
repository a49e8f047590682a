// Module + address -> function, offset, file:line and the chain of inlined
// calls, from DWARF, PDBs and the ELF symbol tables (through LLVM's symbolizer
// modules), and from Breakpad symbol files where the image has no debug
// info; cached per image (or symbol file) and file address. The images and
// symbol files must outlive the Symbolizer: a session's caches keep them.
#pragma once

#include "stackwalk/core/Module.h"
#include "stackwalk/core/SourceFrame.h"
#include "stackwalk/core/SymbolMapCache.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace llvm {
class DIContext;
class DWARFContext;
namespace pdb {
class IPDBSession;
}
namespace symbolize {
class SymbolizableModule;
}
} // namespace llvm

namespace stackwalk {

class DecompressedDebugCache;
class DwarfUnitCheck;
class PrefetchedTwin;

class Symbolizer {
public:
  // Debug info larger than maxDebugBytes in memory is not read (symbols only):
  // a hostile file can claim any uncompressed size.
  // With `inflated`, DWARF compressed in a file is read from its decompressed
  // twin in that cache. Without `readsVariables` (no --args), a twin made in
  // memory leaves the location lists out (DebugSectionTwin.h). With `maps`,
  // an ELF image's frames are looked up in its symbol map there, made the
  // first time from what the image's frames are read from.
  explicit Symbolizer(uint64_t maxDebugBytes = uint64_t(2) << 30, const DecompressedDebugCache *inflated = nullptr,
                      bool readsVariables = true, const SymbolMapCache *maps = nullptr);
  ~Symbolizer();

  // The frames at a runtime address of a module, innermost inlined call first
  // and the physical function last. Empty when nothing is known. Pass the
  // frame's lookup address (ip - 1 for a return address).
  const std::vector<SourceFrame> &symbolize(const Module &module, uint64_t address);
  // The module's DWARF, for readers of more than names (function arguments);
  // null when it has none, when its debug info is refused, or when the unit at
  // this file address does not parse.
  llvm::DWARFContext *dwarf(const Module &module, uint64_t fileAddress);
  // False when the modules' symbol maps show that no tail call lies between
  // a frame of `callee` and its caller returning to `returnAddress` in
  // `caller` (SymbolMap.h): the walk need not read their DWARF to know.
  bool mayHaveTailCalls(const Module &caller, uint64_t returnAddress, const Module &callee);
  // What the image's symbol map was made from, as its entry's path in the
  // cache's folder of maps (xx/yyyy.map); empty when it has none.
  std::string symbolMapIdentity(const ModuleImage &image);
  // Why the image's symbol tables name nothing, when they were refused
  // (malformed, or LLVM's symbolizer would not read them); else empty.
  std::string unusableSymbols(const ModuleImage &image) const;
  // Starts decompressing the module's compressed DWARF on another thread, so
  // that the walk's first name there waits less or not at all: a cold walk of
  // a small dump spent a third of its time inflating libc's debug file before
  // anything else could go on. Only where no symbol cache is used (with one,
  // the twin and the symbol maps come from the cache instead); nothing for a
  // module whose debug info is refused, or an image copied from the dump.
  void prefetchDebugInfo(const Module &module);
  // Stops a prefetch not yet read (its module's debug info was refused after all).
  void cancelPrefetch(const Module &module);
  // That the walk will name this address of the module (a frame's lookup
  // address): a prefetched debug file is read as far as the units that hold
  // the addresses expected before its first name, and the rest inflated only
  // when an address needs it (PrefetchedTwin.h). Without --args only: their
  // reader looks at each thread's DWARF before the next one is unwound. The
  // other modules expected are made while the first twin arrives.
  void expect(const Module &module, uint64_t address);
  // Whether a prefetched file is still inflating, not yet read.
  bool inflating() const;
  // How many files were prefetched and not yet read.
  size_t prefetchedFiles() const;
  // The most DWARF read for one image (and, in a walk, for one dump), uncompressed.
  uint64_t maxDebugBytes() const { return maxDebugBytes_; }

private:
  // What the image's symbol tables and debug info say at a file address.
  std::vector<SourceFrame> framesAt(const ModuleImage &image, uint64_t fileAddress, bool withDebugInfo);
  // The image's symbol map (SymbolMapCache.h), made now when the cache has
  // none; null when there is no cache, or no map of this image can be made.
  const SymbolMap *symbolMap(const ModuleImage &image);
  std::optional<LoadedSymbolMap> makeSymbolMap(const ModuleImage &image, const std::string &path);
  // The frames the image's map has at a file address; nullopt without one.
  std::optional<std::vector<SourceFrame>> fromSymbolMap(const ModuleImage &image, uint64_t fileAddress);
  const std::vector<SourceFrame> &fromSymbolFile(const Module &module, uint64_t address);
  // A module without an image, named by its PDB (Module::pdbPath).
  const std::vector<SourceFrame> &fromPdbAlone(const Module &module, uint64_t address);
  // A module without an image, named by its exported functions in the dump.
  const std::vector<SourceFrame> &exportedFunctionAt(const Module &module, uint64_t address) const;
  llvm::symbolize::SymbolizableModule *moduleFor(const ModuleImage &image, bool withDebugInfo = true);
  std::unique_ptr<llvm::DIContext> debugContext(const ModuleImage &image);
  std::optional<uint64_t> pdbFunctionStart(const ModuleImage &image, uint64_t address) const;
  bool dwarfReadableAt(const ModuleImage &image, uint64_t fileAddress);
  // Makes the modules the walk expects to name (expect) that wait for no
  // prefetched twin, their symbol tables read and DWARF contexts made.
  void prepareExpectedModules();
  // Makes the image's module again on more of its DWARF (a later view that
  // holds the file address's unit too, or the whole), after a context on part
  // of it (PrefetchedTwin::covering) met the address, or a reference from its
  // unit, past its units.
  void readMoreDwarf(const ModuleImage &image, uint64_t fileAddress);

  // A file's decompressed twin, by the file: read by the contexts below.
  struct Twin {
    const ModuleImage *image = nullptr;
    std::optional<uint64_t> infoEnd; // PrefetchedTwin::View
  };
  Twin decompressedTwin(const ModuleImage &file);
  const DecompressedDebugCache *inflated_;
  bool readsVariables_;
  const SymbolMapCache *maps_;
  std::map<const ModuleImage *, std::optional<LoadedSymbolMap>> symbolMaps_;
  std::set<const ModuleImage *> remadeSymbolMaps_; // found damaged and made again
  std::map<const ModuleImage *, std::unique_ptr<ModuleImage>> twins_;
  struct Prefetched {
    std::unique_ptr<PrefetchedTwin> twin;
    bool read = false;            // a view taken
    std::vector<uint64_t> expected; // file addresses (expect), and those past a view (readMoreDwarf)
  };
  std::map<const ModuleImage *, Prefetched> prefetched_; // prefetchDebugInfo, by file
  std::set<std::pair<const ModuleImage *, bool>> expectedModules_; // expect: image, with debug info
  std::vector<std::unique_ptr<ModuleImage>> prefetchedViews_;
  // By image and whether its debug info is used (without: for code in units LLVM cannot parse).
  std::map<std::pair<const ModuleImage *, bool>, std::unique_ptr<llvm::symbolize::SymbolizableModule>> modules_;
  // Modules made on part of their DWARF, kept for what the walk holds of their contexts (readMoreDwarf).
  std::vector<std::unique_ptr<llvm::symbolize::SymbolizableModule>> partialModules_;
  std::map<const ModuleImage *, std::string> unusableSymbols_;
  // By image, file address and whether debug info was used (Module::debugInfoRefused).
  std::map<std::tuple<const ModuleImage *, uint64_t, bool>, std::vector<SourceFrame>> cache_;
  // By symbol file, the image's preferred base and offset from the module's base.
  std::map<std::tuple<const BreakpadSymbolFile *, uint64_t, uint64_t>, std::vector<SourceFrame>> symbolFileCache_;
  // By PDB path: sessions for modules without an image, and what they gave per RVA.
  std::map<std::string, std::unique_ptr<llvm::pdb::IPDBSession>> pdbAloneSessions_;
  std::map<std::pair<std::string, uint32_t>, std::vector<SourceFrame>> pdbAloneCache_;
  std::vector<SourceFrame> empty_;
  uint64_t maxDebugBytes_;
  std::map<const ModuleImage *, llvm::pdb::IPDBSession *> pdbSessions_; // owned by the modules' contexts
  struct DwarfState {
    llvm::DWARFContext *context; // likewise
    std::unique_ptr<DwarfUnitCheck> units;
  };
  std::map<const ModuleImage *, DwarfState> dwarfContexts_;
};

} // namespace stackwalk
