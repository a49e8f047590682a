#include "stackwalk/core/DebugSectionTwin.h"

#include "stackwalk/core/Fail.h"

#include "TwinLayout.h"

#include "llvm/Object/ELFObjectFile.h"

#include <future>
#include <memory>
#include <system_error>

using namespace llvm;

namespace stackwalk {

bool hasCompressedSection(const ModuleImage &file) {
  if (!file.isElf()) return false;
  for (const object::SectionRef &section : file.object().sections())
    if (object::ELFSectionRef(section).getFlags() & ELF::SHF_COMPRESSED) return true;
  return false;
}

namespace {

// Fills each section. The largest compressed one (.debug_info: half of
// libc's debug file) is inflated on a second thread meanwhile, as the others
// are here: on a small dump, inflating a debug file is most of a cold walk's
// time.
Error fillSections(const ModuleImage &file, const TwinLayout &layout, MutableArrayRef<uint8_t> twin) {
  const std::vector<TwinSection> &sections = layout.sections();
  auto fill = [&](size_t i) { return fillSection(file, sections[i], twin); };
  size_t largest = sections.size();
  for (size_t i = 0; i < sections.size(); ++i)
    if (sections[i].compressed && (largest == sections.size() || sections[i].size > sections[largest].size))
      largest = i;
  std::future<Error> aside;
  if (largest != sections.size()) {
    try {
      aside = std::async(std::launch::async, fill, largest);
    } catch (const std::system_error &) {
      largest = sections.size(); // no thread to spare: filled with the others
    }
  }
  Error errors = Error::success();
  for (size_t i = 0; i < sections.size(); ++i)
    if (i != largest) errors = joinErrors(std::move(errors), fill(i));
  if (aside.valid()) errors = joinErrors(std::move(errors), aside.get());
  return errors;
}

} // namespace

// Written here rather than by LLVM's objcopy, which lays every section of
// its input out again at its alignment and allocates what a hostile file
// claims (fuzz_module_image: an alignment of 2^40). Linked files only: an
// object file's DWARF would need its relocation sections too.
Expected<std::unique_ptr<WritableMemoryBuffer>> debugSectionTwin(const ModuleImage &file, uint64_t maxDebugBytes,
                                                                 TwinSections which, const std::string &name) {
  auto layout = TwinLayout::of(file, maxDebugBytes, which);
  if (!layout) return layout.takeError();
  std::unique_ptr<TwinBuffer> buffer = TwinBuffer::make(layout->size(), 0, name);
  if (!buffer) return fail("no memory for the decompressed sections");
  if (Error err = fillSections(file, *layout, buffer->bytes())) return err;
  layout->writeTables(buffer->bytes());
  return buffer;
}

std::unique_ptr<ModuleImage> debugSectionTwinImage(const ModuleImage &file, uint64_t maxDebugBytes,
                                                   const std::string &name, TwinSections which) {
  auto bytes = debugSectionTwin(file, maxDebugBytes, which, name);
  if (!bytes) {
    consumeError(bytes.takeError());
    return nullptr;
  }
  auto image = ModuleImage::fromFileBuffer(std::move(*bytes), name);
  if (!image) {
    consumeError(image.takeError());
    return nullptr;
  }
  return std::move(*image);
}

} // namespace stackwalk
