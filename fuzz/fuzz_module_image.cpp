// ELF and PE module files: layout, identity, debug links, PDB references,
// their DWARF sections decompressed into a twin (DebugSectionTwin),
// symbols and call frame information; the same bytes as an image loaded in
// memory (LoadedElf: dynamic section, hash tables, dynamic symbols), and the
// file rebuilt from that loaded image (ModuleImage::fromLoadedElf), read as
// the file is.
#include "stackwalk/core/DebugSectionTwin.h"
#include "stackwalk/core/LoadedElf.h"
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Symbolizer.h"

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
  uint8_t byte;
  for (const stackwalk::LoadSegment &segment : image->segments())
    (void)image->readAtFileAddress(segment.vaddr, {&byte, 1});
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
  return 0;
}
