#include "stackwalk/core/Symbolizer.h"

#include "stackwalk/core/DebugSectionTwin.h"
#include "stackwalk/core/DecompressedDebugCache.h"
#include "stackwalk/core/Demangle.h"
#include "stackwalk/core/ElfSymbolTable.h"
#include "ElfSymbolizableModule.h"
#include "stackwalk/core/PdbFrames.h"
#include "stackwalk/core/PdbSession.h"
#include "stackwalk/core/RegularFile.h"
#include "SymbolMapSources.h"
#include "stackwalk/core/DwarfUnitCheck.h"
#include "PrefetchedTwin.h"
#include "stackwalk/core/Win64FunctionTable.h"
#include "stackwalk/core/X86NameDecoration.h"

#include "llvm/DebugInfo/DWARF/DWARFCompileUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/PDB/PDB.h"
#include "llvm/DebugInfo/PDB/PDBContext.h"
#include "llvm/DebugInfo/PDB/PDBSymbolFunc.h"
#include "llvm/DebugInfo/PDB/PDBSymbolPublicSymbol.h"
#include "llvm/DebugInfo/PDB/PDBSymbolTypeFunctionSig.h"
#include "llvm/Object/COFF.h"
#include "llvm/DebugInfo/Symbolize/SymbolizableObjectFile.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <ctime>

using namespace llvm;

namespace stackwalk {

namespace {

// Where the Symbolizer reads an image's DWARF: its separate debug file, else itself.
const ModuleImage &dwarfSourceOf(const ModuleImage &image) {
  return image.debugImage() ? *image.debugImage() : image;
}

// The CPU time this thread has used. Making a symbol map is bounded by the
// work it takes, not by the wall clock: on a busy machine the wall clock also
// counts the waiting (six sanitized walks at once on two cores spent more
// than 20 s over libc's map, and left the cache without it).
std::chrono::nanoseconds threadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

std::unique_ptr<DIContext> emptyDwarfContext() {
  return DWARFContext::create(StringMap<std::unique_ptr<MemoryBuffer>>(), 8, /*isLittleEndian=*/true);
}

// An image file read at its own virtual addresses.
class ImageFileMemory : public MemorySource {
public:
  explicit ImageFileMemory(const ModuleImage &image) : image_(image) {}
  bool read(uint64_t address, std::span<uint8_t> out) const override { return image_.readAtFileAddress(address, out); }

private:
  const ModuleImage &image_;
};

// Where the function holding `fileAddress` starts, by a PE32+ image's function
// table; nullopt when the table does not say.
std::optional<uint64_t> tableFunctionStart(const ModuleImage &image, const MemorySource &memory,
                                           const Win64FunctionTable &table, uint64_t fileAddress) {
  auto entry = table.entryCovering(memory, fileAddress - image.preferredBase());
  if (!entry) return consumeError(entry.takeError()), std::nullopt;
  if (!*entry) return std::nullopt;
  auto start = table.functionStart(memory, **entry);
  if (!start) return consumeError(start.takeError()), std::nullopt;
  return image.preferredBase() + *start;
}

// PE exports and COFF symbols have no sizes: LLVM names an address after the
// nearest symbol before it, which may end long before (coreclr.dll's frames
// came out as coreclr_set_error_writer+0x19883). A PE32+ image's function
// table says where the function holding the address starts, through its
// chained fragments: only a symbol there names it. Where no entry holds the
// address (a leaf function), a symbol whose own entry ends before it does not.
// False when the name is dropped.
bool matchFunctionTable(const ModuleImage &image, symbolize::SymbolizableModule &symbols, uint64_t fileAddress,
                        DILineInfo &line) {
  if (!isa<object::COFFObjectFile>(image.object()) || !line.StartAddress) return true;
  ImageFileMemory memory(image);
  auto table = Win64FunctionTable::read(memory, image.preferredBase());
  if (!table) return consumeError(table.takeError()), true; // no table to check the name against
  auto drop = [&] {
    line.FunctionName = DILineInfo::BadString;
    line.StartAddress.reset();
    return false;
  };
  std::optional<uint64_t> start = tableFunctionStart(image, memory, *table, fileAddress);
  if (!start) {
    auto symbolEntry = table->entryCovering(memory, *line.StartAddress - image.preferredBase());
    if (!symbolEntry) return consumeError(symbolEntry.takeError()), true;
    return *symbolEntry && image.preferredBase() + (*symbolEntry)->end <= fileAddress ? drop() : true;
  }
  if (*line.StartAddress == *start) return true;
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::None, DILineInfoSpecifier::FunctionNameKind::LinkageName);
  DILineInfo atStart = symbols.symbolizeCode({*start, object::SectionedAddress::UndefSection}, spec, /*UseSymbolTable=*/true);
  if (atStart.StartAddress != start || atStart.FunctionName == DILineInfo::BadString) return drop();
  line.FunctionName = atStart.FunctionName;
  line.StartAddress = start;
  return true;
}

// What a twin made in memory holds: location lists only for readers of variables.
TwinSections twinSections(bool readsVariables) {
  return readsVariables ? TwinSections::All : TwinSections::WithoutLocationLists;
}

std::string twinName(const ModuleImage &file) { return file.path() + " (decompressed)"; }

} // namespace

Symbolizer::Symbolizer(uint64_t maxDebugBytes, const DecompressedDebugCache *inflated, bool readsVariables,
                       const SymbolMapCache *maps)
    : inflated_(inflated), readsVariables_(readsVariables), maps_(maps), maxDebugBytes_(maxDebugBytes) {}
Symbolizer::~Symbolizer() = default;

// Debug info for an image: its PDB when the resolver found one, else DWARF
// from its separate debug file or itself.
std::unique_ptr<DIContext> Symbolizer::debugContext(const ModuleImage &image) {
  const auto *coff = dyn_cast<object::COFFObjectFile>(&image.object());
  if (coff && !image.pdbPath().empty()) {
    std::unique_ptr<pdb::IPDBSession> session;
    if (Error err = openPdbSession(image.pdbPath(), session)) {
      consumeError(std::move(err));
    } else {
      // The context owns the session for as long as the module is cached;
      // keep a view of it for function starts, which PDBContext does not give.
      pdbSessions_[&image] = session.get();
      return std::make_unique<pdb::PDBContext>(*coff, std::move(session));
    }
  }
  const ModuleImage &dwarfSource = dwarfSourceOf(image);
  // Too much to decompress, or relocations LLVM cannot apply safely: an empty
  // DWARF context, so the symbol table still names frames.
  if (dwarfSource.debugInfoBytes() > maxDebugBytes_ || !dwarfSource.debugRelocationsUsable())
    return emptyDwarfContext();
  // LLVM's complaints about malformed DWARF would go to stderr unstructured, one
  // line per bad table, thousands for a hostile file; what they cost a frame
  // shows as a missing name or line.
  auto ignore = [](Error err) { consumeError(std::move(err)); };
  Twin twin = decompressedTwin(dwarfSource);
  auto context = DWARFContext::create((twin.image ? *twin.image : dwarfSource).object(),
                                      DWARFContext::ProcessDebugRelocations::Process, nullptr, "", ignore, ignore);
  // LLVM decompressed every compressed debug section into memory; the
  // compressed file pages will not be read again.
  if (!twin.image) dwarfSource.releaseCompressedPages();
  auto units = std::make_unique<DwarfUnitCheck>(*context, twin.infoEnd);
  if (!units->unitHeadsReadable()) return emptyDwarfContext();
  dwarfContexts_[&image] = DwarfState{context.get(), std::move(units)};
  return context;
}


// From the cache when there is one, else made in memory (or being made,
// prefetchDebugInfo: then first as far as the units of the addresses the
// walk expects, the whole when one needs more): libdeflate and ISA-L inflate
// what LLVM would have inflated with zlib, in a third of the time.
Symbolizer::Twin Symbolizer::decompressedTwin(const ModuleImage &file) {
  if (auto found = prefetched_.find(&file); found != prefetched_.end()) {
    Prefetched &prefetched = found->second;
    if (!prefetched.read && prefetched.twin->busy()) prepareExpectedModules(); // while it arrives
    bool partial = !readsVariables_ && !prefetched.expected.empty();
    PrefetchedTwin::View view = partial ? prefetched.twin->covering(prefetched.expected) : prefetched.twin->whole();
    prefetched.read = true;
    if (!view.image) return {};
    prefetchedViews_.push_back(std::move(view.image));
    return {prefetchedViews_.back().get(), view.infoEnd};
  }
  if (!hasCompressedSection(file)) return {};
  std::unique_ptr<ModuleImage> twin =
      inflated_ ? inflated_->twin(file, maxDebugBytes_)
                : debugSectionTwinImage(file, maxDebugBytes_, twinName(file), twinSections(readsVariables_));
  if (!twin) return {};
  // The compressed pages will not be read again.
  file.releaseCompressedPages();
  return {(twins_[&file] = std::move(twin)).get(), std::nullopt};
}

void Symbolizer::prefetchDebugInfo(const Module &module) {
  if (inflated_ || maps_ || !module.image || module.debugInfoRefused || module.image->inMemory()) return;
  // As debugContext() reads it: a PE image's PDB is not prefetched.
  if (module.image->object().isCOFF()) return;
  const ModuleImage &source = dwarfSourceOf(*module.image);
  // A few files: each takes two threads, and a thread's first frame is in one of a few libraries.
  constexpr size_t MaxPrefetched = 4;
  if (prefetchedFiles() >= MaxPrefetched || source.inMemory() || source.debugInfoBytes() > maxDebugBytes_ ||
      twins_.count(&source) || prefetched_.count(&source) || !hasCompressedSection(source))
    return;
  // Its threads read only the file's sections; the session keeps the file open past the Symbolizer.
  // Without a thread to spare, the twin is made when it is needed.
  if (auto twin = PrefetchedTwin::start(source, maxDebugBytes_, twinSections(readsVariables_), twinName(source)))
    prefetched_[&source].twin = std::move(twin);
}

void Symbolizer::cancelPrefetch(const Module &module) {
  if (!module.image) return;
  auto found = prefetched_.find(&dwarfSourceOf(*module.image));
  if (found != prefetched_.end() && !found->second.read) prefetched_.erase(found);
}

void Symbolizer::expect(const Module &module, uint64_t address) {
  if (prefetched_.empty() || !module.image) return;
  expectedModules_.insert({module.image.get(), !module.debugInfoRefused});
  if (module.debugInfoRefused) return;
  auto found = prefetched_.find(&dwarfSourceOf(*module.image));
  if (found != prefetched_.end() && !found->second.read) found->second.expected.push_back(address - module.loadBias());
}

// What a cold walk did once the first twin was in: the walk waits for it
// idle, and names frames of these modules soon after.
void Symbolizer::prepareExpectedModules() {
  std::set<std::pair<const ModuleImage *, bool>> expected;
  expected.swap(expectedModules_);
  for (auto [image, withDebugInfo] : expected) {
    if (modules_.count({image, withDebugInfo})) continue;
    auto prefetched = withDebugInfo ? prefetched_.find(&dwarfSourceOf(*image)) : prefetched_.end();
    if (prefetched == prefetched_.end() || prefetched->second.read) moduleFor(*image, withDebugInfo);
  }
}

bool Symbolizer::inflating() const {
  return std::any_of(prefetched_.begin(), prefetched_.end(),
                     [](const auto &entry) { return !entry.second.read && entry.second.twin->busy(); });
}

size_t Symbolizer::prefetchedFiles() const {
  return std::count_if(prefetched_.begin(), prefetched_.end(), [](const auto &entry) { return !entry.second.read; });
}

symbolize::SymbolizableModule *Symbolizer::moduleFor(const ModuleImage &image, bool withDebugInfo) {
  auto key = std::make_pair(&image, withDebugInfo);
  auto found = modules_.find(key);
  if (found != modules_.end()) return found->second.get();
  const ModuleImage &symbolSource = image.symbolImage();
  auto refuse = [&](const char *why) -> symbolize::SymbolizableModule * {
    unusableSymbols_[&image] = why;
    modules_[key] = nullptr;
    return nullptr;
  };
  if (!symbolSource.symbolTablesUsable()) return refuse("its symbol tables are malformed (entry size, link or bounds)");
  // The symbol table first: a prefetched debug file may still be inflating.
  std::shared_ptr<const ElfSymbolTable> elfSymbols = symbolSource.elfSymbols();
  if (!elfSymbols && !llvmReadsSymbolNamesInBounds(symbolSource.object()))
    return refuse("a nameless section symbol is in no section (LLVM would read past the section headers)");
  std::unique_ptr<DIContext> context = withDebugInfo ? debugContext(image) : emptyDwarfContext();
  if (elfSymbols) {
    auto &slot = modules_[key];
    slot = std::make_unique<ElfSymbolizableModule>(symbolSource.object(), std::move(elfSymbols), std::move(context),
                                                   &image);
    return slot.get();
  }
  auto module =
      symbolize::SymbolizableObjectFile::create(&symbolSource.object(), std::move(context), /*UntagAddresses=*/false);
  symbolize::SymbolizableModule *result = nullptr;
  if (module) {
    result = module->get();
  } else {
    unusableSymbols_[&image] = "LLVM's symbolizer refuses the image: " + toString(module.takeError());
    if (withDebugInfo) { // they went with the context
      pdbSessions_.erase(&image);
      dwarfContexts_.erase(&image);
    }
  }
  modules_[key] = module ? std::move(*module) : nullptr;
  return result;
}

std::string Symbolizer::unusableSymbols(const ModuleImage &image) const {
  auto found = unusableSymbols_.find(&image);
  return found == unusableSymbols_.end() ? std::string() : found->second;
}

// LLVM 19 reads malformed DWARF out of bounds (DwarfUnitCheck.h); the unit an
// address falls in, and those it refers to, are checked before LLVM reads them.
bool Symbolizer::dwarfReadableAt(const ModuleImage &image, uint64_t fileAddress) {
  auto dwarf = dwarfContexts_.find(&image);
  if (dwarf == dwarfContexts_.end()) return true;
  DwarfUnitCheck::Verdict verdict = dwarf->second.units->verdictAt(fileAddress);
  // Ends: after PrefetchedTwin::MaxPartialViews views, the next context is on the whole twin.
  while (verdict == DwarfUnitCheck::Verdict::PastPartialSection) {
    readMoreDwarf(image, fileAddress);
    dwarf = dwarfContexts_.find(&image);
    if (dwarf == dwarfContexts_.end()) return true; // no DWARF read at all now
    verdict = dwarf->second.units->verdictAt(fileAddress);
  }
  return verdict == DwarfUnitCheck::Verdict::Readable;
}

void Symbolizer::readMoreDwarf(const ModuleImage &image, uint64_t fileAddress) {
  // The next view holds this address's unit as well as the expected ones'
  // (at most PrefetchedTwin::MaxPartialViews addresses are added so).
  auto prefetched = prefetched_.find(&dwarfSourceOf(image));
  if (prefetched != prefetched_.end()) prefetched->second.expected.push_back(fileAddress);
  auto key = std::make_pair(&image, true);
  if (auto found = modules_.find(key); found != modules_.end()) {
    partialModules_.push_back(std::move(found->second));
    modules_.erase(found);
  }
  dwarfContexts_.erase(&image);
  moduleFor(image, true); // its twin whole now (decompressedTwin)
}

std::optional<uint64_t> Symbolizer::pdbFunctionStart(const ModuleImage &image, uint64_t address) const {
  auto session = pdbSessions_.find(&image);
  if (session == pdbSessions_.end()) return std::nullopt;
  // A function with debug info, else a public symbol (like the CRT's entry points).
  if (auto symbol = session->second->findSymbolByAddress(address, pdb::PDB_SymType::Function))
    if (const auto *function = dyn_cast<pdb::PDBSymbolFunc>(symbol.get())) return function->getVirtualAddress();
  if (auto symbol = session->second->findSymbolByAddress(address, pdb::PDB_SymType::PublicSymbol))
    if (const auto *symbolPublic = dyn_cast<pdb::PDBSymbolPublicSymbol>(symbol.get()))
      return symbolPublic->getVirtualAddress();
  return std::nullopt;
}

DWARFContext *Symbolizer::dwarf(const Module &module, uint64_t fileAddress) {
  if (!module.image || module.debugInfoRefused) return nullptr;
  const ModuleImage &image = *module.image;
  if (!moduleFor(image) || !dwarfReadableAt(image, fileAddress)) return nullptr;
  auto dwarf = dwarfContexts_.find(&image);
  return dwarf == dwarfContexts_.end() ? nullptr : dwarf->second.context;
}

const std::vector<SourceFrame> &Symbolizer::fromSymbolFile(const Module &module, uint64_t address) {
  // Offsets from the module's base, and function starts as the image's file
  // addresses, as every other source gives them.
  uint64_t imageBase = module.image ? module.image->preferredBase() : 0;
  auto key = std::make_tuple(module.symbolFile.get(), imageBase, address - module.base);
  auto [cached, fresh] = symbolFileCache_.try_emplace(key);
  if (fresh) {
    cached->second = module.symbolFile->frames(address - module.base);
    for (SourceFrame &frame : cached->second)
      if (frame.functionStart) *frame.functionStart += imageBase;
  }
  return cached->second;
}

const std::vector<SourceFrame> &Symbolizer::fromPdbAlone(const Module &module, uint64_t address) {
  uint64_t rva = address - module.base;
  if (rva > UINT32_MAX) return empty_;
  auto key = std::make_pair(module.pdbPath, uint32_t(rva));
  auto [cached, fresh] = pdbAloneCache_.try_emplace(key);
  if (!fresh) return cached->second;
  auto [session, opened] = pdbAloneSessions_.try_emplace(module.pdbPath);
  if (opened)
    if (Error err = openPdbSession(module.pdbPath, session->second)) consumeError(std::move(err));
  // RVAs, as every frame of an image-less module: its base is where the process had it.
  if (session->second) cached->second = pdbFramesAt(*session->second, uint32_t(rva));
  return cached->second;
}

const std::vector<SourceFrame> &Symbolizer::exportedFunctionAt(const Module &module, uint64_t address) const {
  const auto &functions = module.exportedFunctions;
  auto after = std::upper_bound(functions.begin(), functions.end(), address,
                                [](uint64_t a, const Module::ExportedFunction &f) { return a < f.start; });
  if (after == functions.begin()) return empty_;
  const Module::ExportedFunction &function = *std::prev(after);
  return address - function.start < function.size ? function.frames : empty_;
}

const std::vector<SourceFrame> &Symbolizer::symbolize(const Module &module, uint64_t address) {
  if (module.symbolFile && module.symbolSource() == "breakpad") {
    const std::vector<SourceFrame> &frames = fromSymbolFile(module, address);
    if (!frames.empty() || !module.image) return frames;
  }
  if (!module.image) {
    if (!module.pdbPath.empty()) return fromPdbAlone(module, address);
    return exportedFunctionAt(module, address);
  }
  const ModuleImage &image = *module.image;
  uint64_t fileAddress = address - module.loadBias();
  // By image and file address: the cache holds nothing that depends on where
  // a dump had the module loaded, so dumps of a batch share it.
  bool withDebugInfo = !module.debugInfoRefused;
  auto key = std::make_tuple(&image, fileAddress, withDebugInfo);
  auto cached = cache_.find(key);
  if (cached != cache_.end()) return cached->second;

  std::vector<SourceFrame> &frames = cache_[key];
  if (withDebugInfo)
    if (auto mapped = fromSymbolMap(image, fileAddress)) return frames = std::move(*mapped);
  return frames = framesAt(image, fileAddress, withDebugInfo);
}

// A map found damaged where a lookup read it is made again, once.
std::optional<std::vector<SourceFrame>> Symbolizer::fromSymbolMap(const ModuleImage &image, uint64_t fileAddress) {
  const SymbolMap *map = symbolMap(image);
  if (!map) return std::nullopt;
  if (auto frames = map->framesAt(fileAddress)) return frames;
  auto &slot = symbolMaps_[&image];
  if (!remadeSymbolMaps_.insert(&image).second) return std::nullopt;
  slot = makeSymbolMap(image, slot->path);
  return slot ? slot->map.framesAt(fileAddress) : std::nullopt;
}

const SymbolMap *Symbolizer::symbolMap(const ModuleImage &image) {
  if (!maps_ || !image.isElf()) return nullptr;
  auto [slot, fresh] = symbolMaps_.try_emplace(&image);
  if (fresh) {
    bool readsDwarf = dwarfSourceOf(image).debugInfoBytes() <= maxDebugBytes_;
    std::string path = maps_->entryPath(image, readsDwarf);
    if (!path.empty()) slot->second = maps_->open(path);
    if (!path.empty() && !slot->second) slot->second = makeSymbolMap(image, path);
  }
  return slot->second ? &slot->second->map : nullptr;
}

// What framesAt says at every boundary (SymbolMapSources.h): one query
// per place the answer may change, through the same code as an uncached walk.
std::optional<LoadedSymbolMap> Symbolizer::makeSymbolMap(const ModuleImage &image, const std::string &path) {
  constexpr size_t MaxBoundaries = size_t(1) << 22; // 4M: 22 times libc's 184,499 line-row addresses
  // A hostile file can make each query slow (inlined calls thousands deep):
  // past this much work the walk goes on without a map, reading the files.
  constexpr auto MaxMakingTime = std::chrono::seconds(20);
  auto deadline = threadCpuTime() + MaxMakingTime;
  if (!moduleFor(image)) return std::nullopt;
  auto dwarf = dwarfContexts_.find(&image);
  bool hasDwarf = dwarf != dwarfContexts_.end();
  auto boundaries = symbolMapBoundaries(image, hasDwarf ? dwarf->second.context : nullptr,
                                        hasDwarf ? dwarf->second.units.get() : nullptr, MaxBoundaries);
  if (!boundaries) return std::nullopt;
  SymbolMapWriter writer;
  for (size_t i = 0; i < boundaries->size(); ++i) {
    if (i % 4096 == 0 && threadCpuTime() > deadline) return std::nullopt;
    writer.add((*boundaries)[i], framesAt(image, (*boundaries)[i], /*withDebugInfo=*/true));
  }
  if (hasDwarf) addCallSites(image, *dwarf->second.context, *dwarf->second.units, writer);
  return maps_->store(path, writer.bytes());
}

std::string Symbolizer::symbolMapIdentity(const ModuleImage &image) {
  // The entry's name (xx/yyyy.map), which hashes what the map was made from;
  // not the cache's folder, which differs between caches holding the same map.
  if (!symbolMap(image)) return "";
  StringRef path = symbolMaps_[&image]->path;
  return (sys::path::filename(sys::path::parent_path(path)) + "/" + sys::path::filename(path)).str();
}

namespace {

// Whether the DWARF the Symbolizer reads for a module has any unit: the
// image's separate debug file's, else its own (.zdebug_info: LLVM inflates
// the older compressed form too).
bool hasDwarfUnits(const Module &module) {
  if (!module.image || module.debugInfoRefused) return false;
  const ModuleImage &source = dwarfSourceOf(*module.image);
  for (StringRef name : {".debug_info", ".zdebug_info"})
    if (auto section = source.section(name); section && !section->data.empty()) return true;
  return false;
}

} // namespace

bool Symbolizer::mayHaveTailCalls(const Module &caller, uint64_t returnAddress, const Module &callee) {
  // The search reads both frames' DWARF functions (TailCalls.cpp): none, no tail calls.
  if (!hasDwarfUnits(caller) || !hasDwarfUnits(callee)) return false;
  const SymbolMap *callerMap = symbolMap(*caller.image);
  return !callerMap || callerMap->mayStartTailCalls(returnAddress - caller.loadBias(), symbolMap(*callee.image));
}

std::vector<SourceFrame> Symbolizer::framesAt(const ModuleImage &image, uint64_t fileAddress, bool withDebugInfo) {
  symbolize::SymbolizableModule *symbols = moduleFor(image, withDebugInfo);
  // Where its unit is unreadable, the rest of the module keeps its DWARF and
  // this address is named by the symbol table (the module may be made again
  // on more of its DWARF first: readMoreDwarf).
  if (symbols && withDebugInfo) symbols = moduleFor(image, dwarfReadableAt(image, fileAddress));
  std::vector<SourceFrame> frames;
  if (!symbols) return frames;
  // DWARF names first, as gdb shows them: with the symbol table on, LLVM
  // renames the physical frame after whichever ELF alias it finds (`__read`
  // for glibc's __libc_read). The symbol table fills in what DWARF lacks.
  DILineInfoSpecifier spec(DILineInfoSpecifier::FileLineInfoKind::AbsoluteFilePath,
                           DILineInfoSpecifier::FunctionNameKind::LinkageName);
  object::SectionedAddress where{fileAddress, object::SectionedAddress::UndefSection};
  DIInliningInfo info = symbols->symbolizeInlinedCode(where, spec, /*UseSymbolTable=*/false);
  std::optional<DILineInfo> fromSymbols;
  auto symbolTableEntry = [&]() -> const DILineInfo & {
    if (!fromSymbols) fromSymbols = symbols->symbolizeCode(where, spec, /*UseSymbolTable=*/true);
    return *fromSymbols;
  };
  bool decoratesCNames = image.object().isCOFF() && image.object().getArch() == Triple::x86;
  uint32_t count = info.getNumberOfFrames();
  for (uint32_t i = 0; i < count; ++i) {
    DILineInfo line = info.getFrame(i);
    bool physical = i + 1 == count;
    bool named = true;
    if (physical && line.FunctionName == DILineInfo::BadString) {
      line.FunctionName = symbolTableEntry().FunctionName;
      line.StartAddress = symbolTableEntry().StartAddress;
      named = matchFunctionTable(image, *symbols, fileAddress, line);
    }
    if (physical && named && !line.StartAddress) line.StartAddress = symbolTableEntry().StartAddress;
    if (physical && named && !line.StartAddress) line.StartAddress = pdbFunctionStart(image, fileAddress);
    SourceFrame frame;
    if (line.FunctionName != DILineInfo::BadString)
      frame.function = decoratesCNames ? undecoratedX86Name(demangledName(line.FunctionName)) : demangledName(line.FunctionName);
    if (line.FileName != DILineInfo::BadString) frame.file = line.FileName;
    if (line.Line) frame.line = line.Line;
    frame.inlined = !physical;
    if (physical && line.StartAddress && *line.StartAddress <= fileAddress)
      frame.functionStart = *line.StartAddress;
    if (frame.function.empty() && frame.file.empty()) continue;
    frames.push_back(std::move(frame));
  }
  return frames;
}

} // namespace stackwalk
