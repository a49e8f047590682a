#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/core/Demangle.h"
#include "stackwalk/core/DynamicSectionIdentity.h"
#include "stackwalk/core/ElfHeaders.h"
#include "stackwalk/core/LoadedElf.h"
#include "stackwalk/core/PdbSession.h"
#include "stackwalk/core/RegularFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/Magic.h"
#include "llvm/DebugInfo/PDB/Native/InfoStream.h"
#include "llvm/DebugInfo/PDB/Native/NativeSession.h"
#include "llvm/DebugInfo/PDB/Native/PDBFile.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>

namespace stackwalk {
namespace {

std::string joinPath(llvm::StringRef a, llvm::StringRef b) {
  llvm::SmallString<256> out(a);
  llvm::sys::path::append(out, b);
  return std::string(out);
}

// ".build-id/ab/cdef..." + suffix, the layout of /usr/lib/debug and debuginfod caches.
std::string buildIdPath(llvm::StringRef root, const std::vector<uint8_t> &buildId, llvm::StringRef suffix) {
  std::string hex = hexString(buildId);
  return joinPath(joinPath(root, ".build-id"), hex.substr(0, 2) + "/" + hex.substr(2) + suffix.str());
}

// `path` made absolute against `workingDirectory` (the process's, read once:
// LLVM's make_absolute asks for it, two stat calls, each time), without "."
// and ".." and a trailing '/'; empty when it is relative and that is unknown.
std::string absolutePath(llvm::StringRef path, llvm::StringRef workingDirectory) {
  llvm::SmallString<256> absolute(path);
  if (!llvm::sys::path::is_absolute(absolute)) {
    if (workingDirectory.empty()) return "";
    llvm::sys::fs::make_absolute(workingDirectory, absolute);
  }
  llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
  return llvm::StringRef(absolute).rtrim('/').str();
}

// Whether the absolute `path` names a file inside the absolute `root`. A
// process run by qemu-user with -L ROOT, or one whose libraries were found
// through LD_LIBRARY_PATH=ROOT/lib, records paths that already begin with ROOT:
// with --sysroot ROOT they are the sysroot's files, not ROOT/ROOT/... .
bool liesUnder(const std::string &path, const std::string &root) {
  return !root.empty() && llvm::StringRef(path).starts_with(root) && path.size() > root.size() &&
         path[root.size()] == '/';
}

bool crcMatches(const std::string &path, uint32_t expected) {
  auto buffer = readRegularFile(path);
  if (!buffer) return false;
  llvm::StringRef data = (*buffer)->getBuffer();
  return llvm::crc32(llvm::arrayRefFromStringRef(data)) == expected;
}

} // namespace

// The folder `dir` as the debug-file roots place it: inside the sysroot, its
// path there (the debug files of SYSROOT/usr/lib lie in ROOT/usr/lib, gdb's
// "base path"), elsewhere its own absolute path; empty when that is unknown.
std::string ModuleResolver::debugRootSubpath(llvm::StringRef dir) const {
  std::string path = absolutePath(dir, workingDirectory_);
  return liesUnder(path, absoluteSysroot_) ? path.substr(absoluteSysroot_.size()) : path;
}

// Names and keys come from the dump: a file's name and hex digits, nothing
// that could climb out of a store or change a URL's meaning.
bool ModuleResolver::isStoreName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c != '/' && c != '\\' && c != 0x7f && c != '%' && c != '?' && c != '#'; });
}

bool ModuleResolver::isStoreKey(const std::string &key) {
  return !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) { return llvm::isHexDigit(c); });
}

ModuleResolver::ModuleResolver(ModuleSearchOptions options, ImageCache *cache)
    : options_(std::move(options)), cache_(cache) {
  llvm::SmallString<256> workingDirectory;
  if (!llvm::sys::fs::current_path(workingDirectory)) workingDirectory_ = std::string(workingDirectory);
  if (!options_.sysroot.empty()) absoluteSysroot_ = absolutePath(options_.sysroot, workingDirectory_);
  // Fetched files are looked up where local ones are.
  if (options_.fetcher) {
    options_.modulePaths.push_back(options_.fetcher->cacheDir());
    options_.symbolPaths.push_back(options_.fetcher->cacheDir());
  }
}

std::optional<std::string> ModuleResolver::findIgnoringCase(const std::string &dir, const std::string &name) const {
  // Windows names a module as it likes (NTDLL.DLL, ntdll.dll): compare names
  // without case, from one listing of each directory.
  auto [listing, fresh] = listings_.try_emplace(dir);
  if (fresh) {
    std::error_code error;
    for (llvm::sys::fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
      listing->second.emplace(llvm::StringRef(llvm::sys::path::filename(it->path())).lower(),
                              std::string(llvm::sys::path::filename(it->path())));
  }
  auto found = listing->second.find(llvm::StringRef(name).lower());
  if (found == listing->second.end()) return std::nullopt;
  return joinPath(dir, found->second);
}

std::vector<std::string> ModuleResolver::imageCandidates(const Module &module) const {
  std::vector<std::string> out;
  if (module.isMainExecutable && !options_.executable.empty()) out.push_back(options_.executable);
  if (!module.recordedPath.empty() && module.recordedPath[0] == '/') {
    std::string recorded = normalizedRecordedPath(module.recordedPath);
    if (!options_.sysroot.empty()) {
      out.push_back(joinPath(options_.sysroot, recorded));
      if (liesUnder(recorded, absoluteSysroot_)) out.push_back(recorded);
    } else if (options_.hostFiles) {
      out.push_back(recorded);
    }
  }
  for (const std::string &dir : options_.modulePaths) {
    if (auto flat = findIgnoringCase(dir, module.name)) out.push_back(*flat);
    if (!module.buildId.empty()) out.push_back(buildIdPath(dir, module.buildId, ""));
    // Microsoft's symbol-store layout: name/<TimeDateStamp><SizeOfImage>/name.
    if (module.peTimeDateStamp && module.peSizeOfImage)
      if (auto named = findIgnoringCase(dir, module.name)) {
        char key[32];
        std::snprintf(key, sizeof key, "%08X%x", *module.peTimeDateStamp, *module.peSizeOfImage);
        if (auto keyed = findIgnoringCase(*named, key))
          if (auto file = findIgnoringCase(*keyed, module.name)) out.push_back(*file);
      }
  }
  return out;
}

namespace {

// How far a module reaches from its base when the dump does not say: its
// file's loadable segments.
uint64_t loadedExtent(const ModuleImage &image) {
  uint64_t end = image.preferredBase();
  for (const LoadSegment &segment : image.segments()) end = std::max(end, segment.vaddr + segment.memSize);
  return end - image.preferredBase();
}

// Adds to a module's notes ("; " between them) each part of `note` not there
// yet: a module is looked at again after each fetch, and what was said of a
// file the first time is not said again.
void addNote(std::string &notes, llvm::StringRef note) {
  llvm::SmallVector<llvm::StringRef, 4> parts, said;
  note.split(parts, "; ", -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    llvm::StringRef(notes).split(said, "; ", -1, /*KeepEmpty=*/false);
    if (llvm::is_contained(said, part)) continue;
    notes += (notes.empty() ? "" : "; ") + part.str();
  }
}

} // namespace

// An ELF file for a module whose minidump records a CodeView GUID: Breakpad
// and Crashpad derive it from the file (ModuleImage::breakpadFileId).
bool ModuleResolver::checksCodeViewGuid(const Module &module, const ModuleImage &image) {
  return module.codeViewGuid.size() == 16 && module.buildId.empty() && image.isElf();
}

std::optional<std::string> ModuleResolver::identityMismatch(const Module &module, const ModuleImage &image) {
  if (!module.buildId.empty() && image.buildId() != module.buildId)
    return "build-id " + hexString(image.buildId());
  if (checksCodeViewGuid(module, image)) {
    std::optional<std::array<uint8_t, 16>> id = image.breakpadFileId();
    if (!id) return std::string("no build-id or .text to derive its identifier from");
    if (!std::equal(id->begin(), id->end(), module.codeViewGuid.begin()))
      return "identifier " + hexString(std::vector<uint8_t>(id->begin(), id->end()));
  }
  if (auto mismatch = dynamicSectionMismatch(module, image)) return *mismatch;
  const auto &pe = image.peIdentity();
  if (pe && module.peTimeDateStamp && module.peSizeOfImage &&
      (pe->timeDateStamp != *module.peTimeDateStamp || pe->sizeOfImage != *module.peSizeOfImage)) {
    char text[64];
    std::snprintf(text, sizeof text, "TimeDateStamp %08X, SizeOfImage %x", pe->timeDateStamp, pe->sizeOfImage);
    return std::string(text);
  }
  return std::nullopt;
}

llvm::Expected<std::shared_ptr<ModuleImage>> ModuleResolver::open(const std::string &path) const {
  if (cache_)
    if (std::shared_ptr<ModuleImage> found = cache_->file(path)) return found;
  auto image = ModuleImage::open(path);
  if (!image) return image.takeError();
  std::shared_ptr<ModuleImage> shared(std::move(*image));
  if (cache_) cache_->addFile(path, shared);
  return shared;
}

std::shared_ptr<ModuleImage> ModuleResolver::findImage(Module &module) const {
  std::string &note = module.imageNote;
  std::string mismatches;
  bool onlyDataFiles = true; // no file found had an object file's magic number
  for (const std::string &path : imageCandidates(module)) {
    if (!isRegularFile(path)) continue;
    auto image = open(path);
    if (!image) {
      llvm::file_magic magic;
      onlyDataFiles = onlyDataFiles && !llvm::identify_magic(path, magic) && magic == llvm::file_magic::unknown;
      mismatches += " " + shown(path) + " (" + llvm::toString(image.takeError()) + ")";
      continue;
    }
    onlyDataFiles = false;
    if (auto mismatch = identityMismatch(module, **image)) {
      mismatches += " " + shown(path) + " (" + *mismatch + ")";
      continue;
    }
    bool byDynamicSection = module.buildId.empty() && !module.dynamicSection.empty();
    bool checked = !module.buildId.empty() || (module.peTimeDateStamp && (*image)->peIdentity()) ||
                   checksCodeViewGuid(module, **image) || byDynamicSection;
    note = !checked          ? "identity not checked: the dump records none"
           : byDynamicSection ? "identity checked by its dynamic section only: the dump records no build-id"
                              : "";
    module.identityUnchecked = !checked;
    if (module.size == 0) module.size = loadedExtent(**image);
    return *image;
  }
  module.dataFile = !mismatches.empty() && onlyDataFiles;
  note = mismatches.empty() ? "no file found"
         : module.dataFile  ? "a data file, not an object file:" + mismatches
                            : "no matching file; rejected:" + mismatches;
  return nullptr;
}

std::vector<std::string> ModuleResolver::debugLinkCandidates(const Module &module, llvm::StringRef name,
                                                             const std::vector<std::string> &roots) const {
  // An image rebuilt from the dump's memory has no folder of its own: its
  // debug file is looked for where the recorded path's folder lies under each
  // root, never in the working directory.
  std::vector<std::string> out;
  std::string folder;
  if (!module.image->inMemory()) {
    llvm::StringRef dir = llvm::sys::path::parent_path(module.image->path());
    out = {joinPath(dir, name), joinPath(joinPath(dir, ".debug"), name)};
    folder = debugRootSubpath(dir);
  } else if (llvm::StringRef(module.recordedPath).starts_with("/")) {
    folder = llvm::sys::path::parent_path(normalizedRecordedPath(module.recordedPath)).str();
  }
  for (const std::string &root : roots) {
    if (!folder.empty()) out.push_back(joinPath(joinPath(root, folder), name));
    out.push_back(joinPath(root, name));
  }
  return out;
}

std::unique_ptr<ModuleImage> ModuleResolver::findDebugImage(const Module &module, std::string &note) const {
  const ModuleImage &image = *module.image;
  // Debug files under the sysroot come before the machine's own, as the
  // modules themselves do.
  std::vector<std::string> roots = options_.modulePaths;
  if (!options_.sysroot.empty())
    for (const std::string &root : options_.debugRoots) roots.push_back(joinPath(options_.sysroot, root));
  if (options_.hostFiles) roots.insert(roots.end(), options_.debugRoots.begin(), options_.debugRoots.end());
  std::string rejected; // each file found but not taken, and why
  std::set<std::string> tried; // a module path may also be the image's own folder
  auto accept = [&](const std::string &path, std::optional<uint32_t> crc) -> std::unique_ptr<ModuleImage> {
    if (!tried.insert(path).second || !isRegularFile(path) || path == image.path()) return nullptr;
    auto debug = ModuleImage::open(path);
    if (!debug) {
      rejected += " " + shown(path) + " (" + llvm::toString(debug.takeError()) + ")";
      return nullptr;
    }
    if (!image.buildId().empty() && !(*debug)->buildId().empty()) {
      if ((*debug)->buildId() == image.buildId()) return std::move(*debug);
      rejected += " " + shown(path) + " (build-id " + hexString((*debug)->buildId()) + ")";
      return nullptr;
    }
    if (crc && crcMatches(path, *crc)) return std::move(*debug);
    rejected += " " + shown(path) + (crc ? " (its CRC is not the debug link's)" : " (no build-id to check it by)");
    return nullptr;
  };
  auto noneTaken = [&]() -> std::unique_ptr<ModuleImage> {
    if (!rejected.empty()) note = "debug file rejected:" + rejected;
    return nullptr;
  };

  if (!image.buildId().empty())
    for (const std::string &root : roots)
      if (auto debug = accept(buildIdPath(root, image.buildId(), ".debug"), std::nullopt)) return debug;

  auto link = image.debugLink();
  if (!link) return noneTaken();
  // The link names a file, never a path: an image read from a dump's memory
  // could spell "../../etc/shadow".
  llvm::StringRef name = llvm::sys::path::filename(link->first);
  if (name.empty() || name == "." || name == "..") return noneTaken();
  for (const std::string &path : debugLinkCandidates(module, name, roots))
    if (auto debug = accept(path, link->second)) return debug;
  return noneTaken();
}

namespace {
// ECMA-335 metadata's signature, which a Portable PDB starts with.
bool isPortablePdb(const std::string &path) {
  char magic[4] = {};
  std::ifstream(path, std::ios::binary).read(magic, sizeof magic);
  return std::memcmp(magic, "BSJB", 4) == 0;
}

// The PDB's own GUID and age, spelled as debug ids are.
llvm::Expected<std::string> pdbFileDebugId(const std::string &path) {
  std::unique_ptr<llvm::pdb::IPDBSession> session;
  if (llvm::Error err = openPdbSession(path, session)) return err;
  auto &native = static_cast<llvm::pdb::NativeSession &>(*session);
  auto info = native.getPDBFile().getPDBInfoStream();
  if (!info) return info.takeError();
  llvm::codeview::GUID guid = info->getGuid();
  return pdbDebugId(std::span<const uint8_t, 16>(guid.Guid, 16), info->getAge());
}
} // namespace

std::optional<std::string> ModuleResolver::findPdb(const Module &module, const ModuleImage *image,
                                                   std::string &note) const {
  // The dump's CodeView record names the PDB; Wine's minidumps leave it out,
  // and the image's own debug directory says the same.
  std::string name = module.debugFile, id = module.debugId;
  if (auto reference = image ? image->pdbReference() : std::nullopt; reference && (name.empty() || id.empty())) {
    name = reference->name;
    id = reference->debugId;
  }
  size_t slash = name.find_last_of("\\/");
  if (slash != std::string::npos) name = name.substr(slash + 1);
  if (name.empty() || id.empty()) return std::nullopt;
  std::string rejected; // each PDB of that name found but not taken, and why
  for (const std::string &dir : options_.modulePaths) {
    std::vector<std::string> candidates;
    if (auto flat = findIgnoringCase(dir, name)) {
      candidates.push_back(*flat);
      if (auto keyed = findIgnoringCase(*flat, id))
        if (auto file = findIgnoringCase(*keyed, name)) candidates.push_back(*file);
    }
    for (const std::string &path : candidates) {
      // A .NET assembly's Portable PDB is not what its CodeView record asks
      // of a symbol store here: managed frames are named from metadata.
      if (!isRegularFile(path) || isPortablePdb(path)) continue;
      auto fileId = pdbFileDebugId(path);
      if (fileId && *fileId == id) return path;
      rejected += " " + shown(path) + " (" + (fileId ? "debug id " + *fileId : llvm::toString(fileId.takeError())) + ")";
    }
  }
  if (!rejected.empty()) note = "PDB rejected:" + rejected;
  return std::nullopt;
}

std::shared_ptr<const BreakpadSymbolFile> ModuleResolver::findSymbolFile(const Module &module, std::string &note) const {
  std::string id = module.breakpadDebugId(), file = module.breakpadDebugFile();
  if (!isStoreName(file) || !isStoreKey(id)) return nullptr;
  llvm::StringRef stem(file);
  if (stem.ends_with_insensitive(".pdb")) stem = stem.drop_back(4);
  std::string symName = stem.str() + ".sym";
  for (const std::string &dir : options_.symbolPaths) {
    auto named = findIgnoringCase(dir, file);
    auto keyed = named ? findIgnoringCase(*named, id) : std::nullopt;
    auto path = keyed ? findIgnoringCase(*keyed, symName) : std::nullopt;
    if (!path || !isRegularFile(*path)) continue;
    std::shared_ptr<const BreakpadSymbolFile> symbols = cache_ ? cache_->symbolFile(*path) : nullptr;
    if (!symbols) {
      auto opened = options_.symbolIndexes ? options_.symbolIndexes->open(*path) : BreakpadSymbolFile::open(*path);
      if (!opened) {
        note = llvm::toString(opened.takeError());
        continue;
      }
      symbols = std::move(*opened);
      if (cache_) cache_->addSymbolFile(*path, symbols);
    }
    if (!llvm::StringRef(symbols->header().debugId).equals_insensitive(id)) {
      note = "symbol file " + shown(*path) + " rejected: its debug id is " + symbols->header().debugId;
      continue;
    }
    note.clear();
    return symbols;
  }
  return nullptr;
}

// A full-memory dump holds every loaded image: without its file, a module is
// rebuilt from the process's memory (as WinDbg does for PE images), for its
// symbols and unwind info. The bytes are the process's own, so its identity
// is the dump's; a recorded build-id that differs means the memory at the
// module's base is not that module. Why a module was not rebuilt is noted
// only when the dump holds its first bytes: most dumps hold no module's
// image, and saying so of each would be noise. A rebuilt module's note keeps
// what the file search said (no file, or the files refused and why).
std::shared_ptr<ModuleImage> ModuleResolver::imageFromMemory(Target &target, Module &module) {
  uint64_t budget = target.budget.copiedImageBytesLeft();
  auto image = target.os() == OS::Windows ? ModuleImage::fromLoadedPe(target, module.base, module.name, budget)
                                          : ModuleImage::fromLoadedElf(target, module.base, module.name, budget);
  auto notRebuilt = [&](const std::string &why) {
    std::array<uint8_t, 4> magic;
    if (!target.readFromDump(module.base, magic)) return;
    module.imageNote += (module.imageNote.empty() ? "" : "; ") + ("not rebuilt from the dump's memory: " + why);
  };
  if (!image) {
    notRebuilt(llvm::toString(image.takeError()));
    return nullptr;
  }
  if (!module.buildId.empty() && (*image)->buildId() != module.buildId) {
    notRebuilt("the image there has build-id " + hexString((*image)->buildId()) + ", the dump records " +
               hexString(module.buildId));
    return nullptr;
  }
  target.budget.takeCopiedImage((*image)->memoryBytes().size());
  module.imageNote = rebuiltNote(module.imageNote);
  return std::shared_ptr<ModuleImage>(std::move(*image));
}

void ModuleResolver::resolve(Target &target) const { resolve(target, {}, {}); }

void ModuleResolver::resolve(Target &target, const std::vector<const Module *> &first,
                             const std::function<void(const Module &)> &resolvedFirst) const {
  auto resolveOne = [&](Module &module) {
    std::string symbolNote;
    if (!module.image) {
      module.image = findImage(module);
      if (!module.image) module.image = imageFromMemory(target, module);
    }
    attachDebugInfo(module, symbolNote);
    addNote(module.imageNote, symbolNote);
  };
  std::map<const Module *, Module *> modules; // first's pointers, as the target's own
  for (Module &module : target.modules) modules[&module] = &module;
  std::set<const Module *> done;
  for (const Module *wanted : first)
    if (auto found = modules.find(wanted); found != modules.end() && done.insert(wanted).second) {
      resolveOne(*found->second);
      if (resolvedFirst) resolvedFirst(*found->second);
    }
  for (Module &module : target.modules)
    if (!done.count(&module)) resolveOne(module);
  if (options_.fetcher) {
    fetchMissing(target);
    // Fetched now or by an earlier walk: the report says the same.
    for (Module &module : target.modules) noteOrigins(module);
  }
  // Symbol entries read from the dump's memory, for all its modules together.
  uint64_t exportBudget = uint64_t(1) << 20;
  for (Module &module : target.modules)
    if (!module.image && target.os() != OS::Windows) {
      readExportedFunctions(target, module, exportBudget);
      readSegmentsInDump(target, module);
    }
  summarize(target);
}

void ModuleResolver::attachDebugInfo(Module &module, std::string &symbolNote) const {
  if (!options_.symbolPaths.empty() && !module.symbolFile) module.symbolFile = findSymbolFile(module, symbolNote);
  std::string debugNote; // a debug file or PDB found but not taken
  if (!module.image) {
    if (module.pdbPath.empty() && llvm::StringRef(module.debugFile).ends_with_insensitive(".pdb"))
      module.pdbPath = findPdb(module, nullptr, debugNote).value_or("");
  } else {
    if (cache_) module.image = cache_->intern(std::move(module.image));
    if (!module.image->hasDwarf() && !module.image->debugImage())
      if (auto debug = findDebugImage(module, debugNote)) module.image->setDebugImage(std::move(debug));
    if (module.image->pdbReference() && module.image->pdbPath().empty())
      if (auto pdb = findPdb(module, module.image.get(), debugNote)) module.image->setPdbPath(*pdb);
  }
  if (!debugNote.empty()) symbolNote += (symbolNote.empty() ? "" : "; ") + debugNote;
}

std::vector<SymbolRequest> ModuleResolver::requestsFor(const Module &module, OS os) {
  using Kind = SymbolRequest::Kind;
  std::vector<SymbolRequest> out;
  bool hasFile = module.image && !module.image->inMemory();
  std::string_view source = module.symbolSource();
  bool debugInfo = source == "dwarf" || source == "pdb" || source == "breakpad";
  if (!module.buildId.empty()) {
    std::string id = hexString(module.buildId);
    if (!hasFile) out.push_back({Kind::ElfExecutable, module.name, id});
    if (!debugInfo) out.push_back({Kind::ElfDebugFile, module.name, id});
  }
  // Minidumps record a TimeDateStamp and SizeOfImage for every module; only a PE's are a key.
  if (os == OS::Windows && module.peTimeDateStamp && module.peSizeOfImage && !hasFile && isStoreName(module.name)) {
    char key[32];
    std::snprintf(key, sizeof key, "%08X%x", *module.peTimeDateStamp, *module.peSizeOfImage);
    out.push_back({Kind::PeImage, module.name, key});
  }
  if (module.image && module.image->pdbPath().empty()) {
    if (auto reference = module.image->pdbReference(); reference && isStoreName(reference->name))
      out.push_back({Kind::Pdb, reference->name, reference->debugId});
  } else if (!module.image && module.pdbPath.empty() && !module.debugId.empty()) {
    std::string pdb = module.breakpadDebugFile();
    if (llvm::StringRef(pdb).ends_with_insensitive(".pdb") && isStoreName(pdb) && isStoreKey(module.debugId))
      out.push_back({Kind::Pdb, pdb, module.debugId});
  }
  std::string debugFile = module.breakpadDebugFile(), debugId = module.breakpadDebugId();
  if (!debugInfo && isStoreName(debugFile) && isStoreKey(debugId))
    out.push_back({Kind::BreakpadSymbols, debugFile, debugId});
  return out;
}

void ModuleResolver::fetchMissing(Target &target) const {
  std::vector<Module *> modules;
  for (Module &module : target.modules) modules.push_back(&module);
  // Again for the images that arrived: an image names files of its own that
  // the dump may not record (a PE's PDB, by its CodeView record).
  std::vector<Module *> arrived = fetchFor(target, modules);
  if (!arrived.empty()) fetchFor(target, arrived);
}

std::vector<Module *> ModuleResolver::fetchFor(Target &target, const std::vector<Module *> &modules) const {
  std::vector<SymbolRequest> requests;
  std::vector<Module *> asked, arrived;
  for (Module *module : modules) {
    std::vector<SymbolRequest> wanted = requestsFor(*module, target.os());
    if (wanted.empty()) continue;
    asked.push_back(module);
    requests.insert(requests.end(), wanted.begin(), wanted.end());
  }
  if (requests.empty()) return arrived;
  // A dump names as many modules as it likes: it cannot make stackwalk ask a
  // server without end.
  constexpr size_t MaxRequests = 4096;
  if (requests.size() > MaxRequests) {
    target.warnings.push_back("symbol servers were asked for the first " + std::to_string(MaxRequests) + " of " +
                              std::to_string(requests.size()) + " files the dump's modules lack");
    requests.resize(MaxRequests);
  }
  options_.fetcher->fetch(requests, target.warnings);
  listings_.clear(); // the cache has new directories
  for (Module *module : asked) {
    // A file from the cache replaces an image rebuilt from memory.
    if (!module->image || module->image->inMemory()) {
      std::string before = module->imageNote;
      if (auto found = findImage(*module)) {
        module->image = std::move(found);
        arrived.push_back(module);
      } else {
        keepNoteBeforeFetch(*module, before);
      }
    }
    std::string symbolNote;
    attachDebugInfo(*module, symbolNote);
    addNote(module->imageNote, symbolNote);
  }
  return arrived;
}

std::string ModuleResolver::rebuiltNote(const std::string &fileSearchNote) {
  return "rebuilt from the dump's memory (" + (fileSearchNote.empty() ? "no file found" : fileSearchNote) + ")";
}

// After a fetch that brought no usable image, the module's note is what it was
// unless a fetched file was refused: then it is the search's new note (naming
// the file's URL), inside the in-memory image's note when there is one. (The
// symbol files' notes are made again after it.)
void ModuleResolver::keepNoteBeforeFetch(Module &module, const std::string &before) {
  std::string after = std::exchange(module.imageNote, before);
  if (llvm::StringRef(after).starts_with("no file found")) return; // nothing was refused
  module.imageNote = module.image ? rebuiltNote(after) : after;
}

// A path as a note shows it: a file a symbol server sent names its URL, so
// that a rejected one says where it came from.
std::string ModuleResolver::shown(const std::string &path) const {
  auto origin = options_.fetcher ? options_.fetcher->originOf(path) : std::nullopt;
  return origin ? path + " (fetched from " + *origin + ")" : path;
}

void ModuleResolver::noteOrigins(Module &module) const {
  std::vector<std::string> paths;
  if (module.image && !module.image->inMemory()) paths.push_back(module.image->path());
  if (!module.debugInfoPath().empty()) paths.push_back(module.debugInfoPath());
  if (module.symbolFile) paths.push_back(module.symbolFile->path());
  for (const std::string &path : paths)
    if (auto origin = options_.fetcher->originOf(path))
      addNote(module.imageNote, "fetched from " + *origin);
}

// A full core holds the pages of a module whose file is missing: its dynamic
// symbols name the exported functions (glibc's, the .NET runtime's exports).
void ModuleResolver::readExportedFunctions(const Target &target, Module &module, uint64_t &budget) {
  if (budget == 0) return;
  auto elf = LoadedElf::read(target, module.base);
  if (!elf) return llvm::consumeError(elf.takeError());
  for (LoadedElf::Function &function : elf->functions(budget)) {
    if (!module.contains(function.start)) continue;
    SourceFrame frame;
    frame.function = demangledName(function.name);
    frame.functionStart = function.start - module.base; // a file address: the module has no image
    module.exportedFunctions.push_back({function.start, function.size, {std::move(frame)}});
  }
}

void ModuleResolver::readSegmentsInDump(const Target &target, Module &module) {
  constexpr size_t MaxProgramHeaders = 256;
  std::optional<ElfImageHeaders> headers = readElfHeaders(target, module.base, MaxProgramHeaders);
  if (!headers) return;
  uint64_t lowest = lowestLoadAddress(headers->programHeaders);
  for (const ElfProgramHeader &ph : headers->programHeaders)
    if (ph.type == llvm::ELF::PT_LOAD && ph.vaddr >= lowest)
      module.segmentsInDump.push_back(
          {ph.vaddr - lowest, ph.memsz, ph.offset, ph.filesz, bool(ph.flags & llvm::ELF::PF_X)});
}

void ModuleResolver::summarize(Target &target) const {
  std::vector<std::string> missing, rejected, symbolFileOnly, exportsOnly;
  for (const Module &module : target.modules) {
    if (module.image || module.dataFile) continue; // a data file has no code to miss
    if (module.symbolFile) symbolFileOnly.push_back(module.name);
    else if (!module.pdbPath.empty() || !module.exportedFunctions.empty()) exportsOnly.push_back(module.name);
    else (module.imageNote.starts_with("no file found") ? missing : rejected).push_back(module.name);
  }
  // One line per kind of problem; each module's own note says where we looked.
  auto summarize = [&](const std::vector<std::string> &names, const std::string &what) {
    if (names.empty()) return;
    std::string line = std::to_string(names.size()) + " module(s) " + what + ":";
    for (const std::string &name : names) line += " " + name;
    target.warnings.push_back(line + " (no symbols; unwinding them relies on dump memory)");
  };
  summarize(missing, "have no file");
  summarize(rejected, "have only files whose identity differs from the dump's");
  if (!exportsOnly.empty())
    target.warnings.push_back(std::to_string(exportsOnly.size()) +
                              " module(s) have no file, only their PDB or the dynamic symbols of their image in the "
                              "dump (exported functions named; unwinding them relies on dump memory):" +
                              llvm::join(exportsOnly, " ").insert(0, " "));
  if (!symbolFileOnly.empty())
    target.warnings.push_back(std::to_string(symbolFileOnly.size()) +
                              " module(s) have only a Breakpad symbol file (named and unwound by it and by dump memory):" +
                              llvm::join(symbolFileOnly, " ").insert(0, " "));
}

} // namespace stackwalk
