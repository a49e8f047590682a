// Finds the file of each module and its separate debug file, and checks that
// they are the ones the process had loaded (ELF build-id) before using them.
// Paths a dump records are normalized before use (RegularFile.h), and only
// regular files are opened.
#pragma once

#include "stackwalk/core/ImageCache.h"
#include "stackwalk/core/SymbolFetcher.h"
#include "stackwalk/core/SymbolIndexCache.h"
#include "stackwalk/core/Target.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct ModuleSearchOptions {
  std::string executable;               // the main executable's file, as gdb's EXE argument
  std::string sysroot;                  // prefix for recorded absolute paths
  std::vector<std::string> modulePaths; // flat dirs and .build-id trees
  // Breakpad symbol stores: DIR/<debug file>/<debug id>/<debug file>.sym
  // (".pdb" replaced by ".sym").
  std::vector<std::string> symbolPaths;
  std::vector<std::string> debugRoots{"/usr/lib/debug"};
  // False for untrusted dumps (--no-host-files): a recorded path is looked up
  // only under the sysroot, and debug files never under the host's debugRoots,
  // so a dump cannot make stackwalk open or describe the host's files.
  bool hostFiles = true;
  // Symbol servers, asked for what no local file gives (owned by the caller);
  // their cache directory is searched as a module and symbol path.
  SymbolFetcher *fetcher = nullptr;
  // Where Breakpad symbol files' indexes are kept between walks (owned by the
  // caller); null: each file is indexed by a pass over it.
  const SymbolIndexCache *symbolIndexes = nullptr;
};


class ModuleResolver {
public:
  explicit ModuleResolver(ModuleSearchOptions options, ImageCache *cache = nullptr);

  // Attaches an image to every module that has a matching file; records in
  // Module::imageNote and Target::warnings why a module has none. With a
  // cache, files opened for earlier dumps (with the debug files and PDBs
  // found for them) are not opened again, and images read from the dump's
  // memory become the session's copy of the same bytes.
  void resolve(Target &target) const;
  // The same, resolving `first` before the other modules and calling
  // `resolvedFirst` after each of them: a walk starts inflating the debug
  // files of the modules its threads stopped in while the rest are looked for.
  void resolve(Target &target, const std::vector<const Module *> &first,
               const std::function<void(const Module &)> &resolvedFirst) const;
  // The first candidate file whose identity matches the module, or null; sets
  // the module's imageNote and identityUnchecked.
  std::shared_ptr<ModuleImage> findImage(Module &module) const;

  // What symbol servers are asked for a module the local files left without
  // a file or debug info.
  static std::vector<SymbolRequest> requestsFor(const Module &module, OS os);

private:
  static bool isStoreName(const std::string &name);
  static bool isStoreKey(const std::string &key);
  // The module's debug file, PDB and Breakpad symbol file, where it has none yet.
  void attachDebugInfo(Module &module, std::string &symbolNote) const;
  // Asks the fetcher for what is missing, then looks again.
  void fetchMissing(Target &target) const;
  // One round of that for these modules; returns those whose image arrived.
  std::vector<Module *> fetchFor(Target &target, const std::vector<Module *> &modules) const;
  void noteOrigins(Module &module) const;
  static void keepNoteBeforeFetch(Module &module, const std::string &before);
  static std::string rebuiltNote(const std::string &fileSearchNote);
  std::string shown(const std::string &path) const;
  static void readExportedFunctions(const Target &target, Module &module, uint64_t &budget);
  // Its PT_LOAD segments, where the dump holds its program headers (Module::segmentsInDump).
  static void readSegmentsInDump(const Target &target, Module &module);
  // One warning per kind of module without a file.
  void summarize(Target &target) const;
  // Within the dump's budget for copied images (DumpBudget.h).
  static std::shared_ptr<ModuleImage> imageFromMemory(Target &target, Module &module);
  // The separate debug file of the module's image, by build-id or debug link;
  // else null, and `note` says which files were found but rejected, and why.
  std::unique_ptr<ModuleImage> findDebugImage(const Module &module, std::string &note) const;
  // Where a debug link's file may lie: beside the image's file, and under each
  // debug-file root at the image's folder.
  std::vector<std::string> debugLinkCandidates(const Module &module, llvm::StringRef name,
                                               const std::vector<std::string> &roots) const;
  std::string debugRootSubpath(llvm::StringRef dir) const;
  // The PDB of a PE module: flat, or in symbol-store layout name.pdb/<id>/name.pdb.
  // Without an image, by the dump's CodeView record alone. Else nullopt, and
  // `note` says which PDBs of that name were rejected, and why.
  std::optional<std::string> findPdb(const Module &module, const ModuleImage *image, std::string &note) const;
  // The module's Breakpad symbol file whose MODULE record names its debug id;
  // else null, and `note` says which file was rejected.
  std::shared_ptr<const BreakpadSymbolFile> findSymbolFile(const Module &module, std::string &note) const;
  std::vector<std::string> imageCandidates(const Module &module) const;
  std::optional<std::string> findIgnoringCase(const std::string &dir, const std::string &name) const;
  // Why a file is not the module the dump describes, or nullopt when it is.
  static std::optional<std::string> identityMismatch(const Module &module, const ModuleImage &image);
  static bool checksCodeViewGuid(const Module &module, const ModuleImage &image);

  // The image at a path, from the cache when it was opened before.
  llvm::Expected<std::shared_ptr<ModuleImage>> open(const std::string &path) const;

  ModuleSearchOptions options_;
  ImageCache *cache_;
  std::string workingDirectory_; // empty when unknown
  std::string absoluteSysroot_;  // options_.sysroot, absolute, without a trailing '/'; empty without one
  mutable std::map<std::string, std::map<std::string, std::string>> listings_; // dir -> lower name -> name
};

} // namespace stackwalk
