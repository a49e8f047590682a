// A PE image rebuilt from a process's memory, for full-memory minidumps whose
// module files are missing (as WinDbg reads them). The loader placed each
// section at its virtual address; LLVM's COFF reader wants the file layout,
// with each section at its PointerToRawData. Relocations the loader applied
// stay applied: stackwalk reads RVAs (exports, .pdata, unwind info), which
// relocation does not touch.
#include "stackwalk/core/ModuleImage.h"

#include "PeHeaders.h"

#include "stackwalk/core/Fail.h"

#include "llvm/BinaryFormat/COFF.h"
#include "llvm/Object/COFF.h"

using namespace llvm;

namespace stackwalk {

namespace {

constexpr uint64_t MaxHeaderBytes = 0x10000;
constexpr uint64_t MaxImageBytes = uint64_t(256) << 20;

struct PeHeaders {
  std::vector<object::coff_section> sections;
  uint32_t sizeOfHeaders = 0;
};

Expected<PeHeaders> readHeaders(const MemorySource &memory, uint64_t base) {
  auto pe = readPe32PlusHeaders(memory, base);
  if (!pe) return pe.takeError();
  if (pe->optional.SizeOfHeaders > MaxHeaderBytes) return fail("an unreadable optional header");
  PeHeaders headers;
  headers.sizeOfHeaders = pe->optional.SizeOfHeaders;
  uint64_t table = pe->optionalAddress + pe->file.SizeOfOptionalHeader;
  for (unsigned i = 0; i < pe->file.NumberOfSections; ++i) {
    auto section = memory.readValue<object::coff_section>(table + i * sizeof(object::coff_section));
    if (!section) return fail("an unreadable section table");
    headers.sections.push_back(*section);
  }
  if (table + headers.sections.size() * sizeof(object::coff_section) > base + headers.sizeOfHeaders)
    return fail("a section table past the headers");
  return headers;
}

// The section's bytes that the loader mapped from the file: raw data beyond
// the virtual size was never mapped (it stays zeros in the rebuilt file).
uint64_t mappedRawBytes(const object::coff_section &section) {
  return std::min<uint64_t>(section.SizeOfRawData, section.VirtualSize ? section.VirtualSize : section.SizeOfRawData);
}

// Whether the file layout the headers claim is about as large as the bytes the
// loader mapped: a real image packs its sections' raw data one after another
// (each padded to FileAlignment, at most 64 KiB), so a header that places raw
// data far apart, or claims raw data it never mapped, is not one.
bool layoutFitsMappedBytes(const PeHeaders &headers, uint64_t fileSize) {
  constexpr uint64_t MaxPadding = 0x10000;
  uint64_t mapped = headers.sizeOfHeaders;
  for (const object::coff_section &section : headers.sections) mapped += mappedRawBytes(section);
  return fileSize <= mapped + (headers.sections.size() + 1) * MaxPadding;
}

} // namespace

Expected<std::unique_ptr<ModuleImage>> ModuleImage::fromLoadedPe(const MemorySource &memory, uint64_t base,
                                                                 const std::string &name, uint64_t maxBytes) {
  Expected<PeHeaders> headers = readHeaders(memory, base);
  if (!headers) return headers.takeError();
  uint64_t fileSize = headers->sizeOfHeaders;
  for (const object::coff_section &section : headers->sections)
    if (section.SizeOfRawData) fileSize = std::max<uint64_t>(fileSize, uint64_t(section.PointerToRawData) + section.SizeOfRawData);
  if (fileSize > std::min(MaxImageBytes, maxBytes))
    return fail("a PE image of " + std::to_string(fileSize >> 20) + " MiB in the dump's memory: over the limit");
  if (!layoutFitsMappedBytes(*headers, fileSize))
    return fail("PE headers whose file layout is far larger than the sections they map");
  // Every section readable before anything is allocated: a damaged header may claim any size.
  for (const object::coff_section &section : headers->sections)
    if (!memory.readableThroughout(base + section.VirtualAddress, mappedRawBytes(section)))
      return fail("a section of the image is not in the dump's memory");
  std::vector<uint8_t> bytes(fileSize);
  if (!memory.read(base, std::span(bytes).first(headers->sizeOfHeaders)))
    return fail("the PE headers are not in the dump's memory");
  for (const object::coff_section &section : headers->sections) {
    uint64_t mapped = mappedRawBytes(section);
    if (mapped && !memory.read(base + section.VirtualAddress, std::span(bytes).subspan(section.PointerToRawData, mapped)))
      return fail("a section of the image is not in the dump's memory");
  }
  return fromBytes(std::move(bytes), name);
}

} // namespace stackwalk
