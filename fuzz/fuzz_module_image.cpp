// ELF and PE module files: layout, identity, debug links, PDB references,
// their DWARF sections decompressed into a twin (DebugSectionTwin),
// symbols (by name too) and call frame information; the same bytes as an image loaded in
// memory (LoadedElf: dynamic section, hash tables, dynamic symbols), and the
// file rebuilt from that loaded image (ModuleImage::fromLoadedElf; its
// .eh_frame searched for when no PT_GNU_EH_FRAME locates it), read as
// the file is; and, for the bytes as a file on disk, the symbol map
// --symbol-cache makes of it (SymbolMap.h), which must say what the
// Symbolizer says reading the file (the fuzzer stops when it does not), and
// its DWARF prefetched and read a part at a time (PrefetchedTwin).
#include "stackwalk/core/DebugSectionTwin.h"
#include "stackwalk/core/LoadedElf.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/SymbolMapCache.h"
#include "stackwalk/core/Symbolizer.h"

#include "llvm/Support/FileSystem.h"

#include <cstdlib>
#include <fstream>

#include "../lib/unwinder/src/CfiSection.h"

constexpr uint64_t LoadedAt = 0x7f0000000000;

static void lookUpAsLoaded(const stackwalk::MemorySource &memory) {
  auto elf = stackwalk::LoadedElf::read(memory, LoadedAt);
  if (!elf) return llvm::consumeError(elf.takeError());
  for (const char *name : {"DotNetRuntimeContractDescriptor", "main", ""}) {
    auto address = elf->symbolAddress(name);
    if (!address) llvm::consumeError(address.takeError());
  }
}

// What a walk reads of an image: segments, symbols, unwind tables.
static void readImage(std::unique_ptr<stackwalk::ModuleImage> image) {
  (void)image->debugLink();
  (void)image->pdbReference();
  // By the GNU hash table or a scan of the symbols, as the walk asks every module.
  for (const char *name : {"__jit_debug_descriptor", "_U_dyn_info_list", "main", ""})
    (void)image->symbolAddress(name);
  uint8_t byte;
  for (const stackwalk::LoadSegment &segment : image->segments())
    (void)image->readAtFileAddress(segment.vaddr, {&byte, 1});
  // The Symbolizer reads them only for an address in a PLT section.
  for (const stackwalk::PltStubs::Stub &stub : image->pltStubs().stubs()) (void)image->pltStubs().at(stub.start);
  auto module = std::make_shared<stackwalk::Module>();
  module->name = "fuzz";
  module->base = image->preferredBase();
  module->size = 1 << 20;
  module->image = std::shared_ptr<stackwalk::ModuleImage>(std::move(image));
  stackwalk::Symbolizer symbolizer;
  for (const stackwalk::LoadSegment &segment : module->image->segments())
    if (segment.executable) (void)symbolizer.symbolize(*module, segment.vaddr + segment.memSize / 2);
  if (auto ehFrame = module->image->section(".eh_frame")) {
    auto hdr = module->image->section(".eh_frame_hdr");
    stackwalk::CfiSection cfi(stackwalk::CfiSection::Kind::EhFrame, ehFrame->data, ehFrame->address,
                              llvm::Triple::x86_64, hdr ? hdr->data : llvm::StringRef(), hdr ? hdr->address : 0);
    for (const stackwalk::LoadSegment &segment : module->image->segments()) {
      auto entry = cfi.find(segment.vaddr + segment.memSize / 3);
      if (!entry) llvm::consumeError(entry.takeError());
    }
  }
}

// The map of the bytes as a file, made in a cache of its own (a map is named
// by build-id and size, which fuzzed files share), against the Symbolizer.
static void compareSymbolMap(const uint8_t *data, size_t size) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("fuzz-symbol-map", dir)) return;
  std::string path = std::string(dir) + "/image";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(data), std::streamsize(size));
  auto image = stackwalk::ModuleImage::open(path);
  if (image && (*image)->isElf()) {
    stackwalk::Module module;
    module.name = "fuzz";
    module.base = (*image)->preferredBase();
    module.size = 1 << 20;
    module.image = std::shared_ptr<stackwalk::ModuleImage>(std::move(*image));
    stackwalk::SymbolMapCache maps(std::string(dir) + "/cache");
    stackwalk::Symbolizer fromFile, fromMap(uint64_t(2) << 30, nullptr, true, &maps);
    auto key = [](const stackwalk::SourceFrame &f) {
      return std::make_tuple(f.function, f.functionStart, f.file, f.line, f.inlined);
    };
    for (const stackwalk::LoadSegment &segment : module.image->segments())
      for (uint64_t address : {segment.vaddr, segment.vaddr + segment.memSize / 2, segment.vaddr + segment.memSize - 1}) {
        const auto &expected = fromFile.symbolize(module, address);
        const auto &mapped = fromMap.symbolize(module, address);
        if (!std::equal(expected.begin(), expected.end(), mapped.begin(), mapped.end(),
                        [&](const auto &a, const auto &b) { return key(a) == key(b); }))
          std::abort();
      }
    // As a walk reads it: prefetched on other threads (a file's only), then as
    // far as the units of the addresses expected (PrefetchedTwin::covering),
    // and further, or whole, for an address past them.
    stackwalk::Symbolizer prefetching(uint64_t(2) << 30, nullptr, /*readsVariables=*/false);
    prefetching.prefetchDebugInfo(module);
    for (const stackwalk::LoadSegment &segment : module.image->segments())
      prefetching.expect(module, segment.vaddr + segment.memSize / 4);
    for (const stackwalk::LoadSegment &segment : module.image->segments())
      for (uint64_t address : {segment.vaddr + segment.memSize / 4, segment.vaddr + segment.memSize / 2})
        (void)prefetching.symbolize(module, address);
  } else if (!image) {
    llvm::consumeError(image.takeError());
  }
  llvm::sys::fs::remove_directories(dir);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  stackwalk::BufferMemory memory;
  memory.add(LoadedAt, std::vector<uint8_t>(data, data + size));
  lookUpAsLoaded(memory);
  if (auto rebuilt = stackwalk::ModuleImage::fromLoadedElf(memory, LoadedAt, "fuzz", 64 << 20))
    readImage(std::move(*rebuilt));
  else
    llvm::consumeError(rebuilt.takeError());
  auto image = stackwalk::ModuleImage::fromBytes(std::vector<uint8_t>(data, data + size), "fuzz");
  if (!image) {
    llvm::consumeError(image.takeError());
    return 0;
  }
  // What --symbol-cache keeps of a debug file: LLVM's objcopy on the bytes.
  auto inflated = stackwalk::debugSectionTwin(**image, 64 << 20);
  if (!inflated) llvm::consumeError(inflated.takeError());
  readImage(std::move(*image));
  compareSymbolMap(data, size);
  return 0;
}
