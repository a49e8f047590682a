#include "stackwalk/core/ElfHeaders.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <cstring>

namespace stackwalk {
namespace {

template <typename T> T loadAt(std::span<const uint8_t> bytes, size_t offset = 0) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

template <typename Ehdr> ElfFileHeader widen(const Ehdr &h, unsigned wordSize) {
  return ElfFileHeader{wordSize,    h.e_type,  h.e_machine, h.e_phentsize, h.e_phnum, h.e_shentsize,
                       h.e_shnum,   h.e_entry, h.e_phoff,   h.e_shoff};
}

template <typename Phdr> ElfProgramHeader widen(const Phdr &ph) {
  return ElfProgramHeader{ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
}

} // namespace

std::optional<ElfFileHeader> parseElfFileHeader(std::span<const uint8_t> bytes) {
  using namespace llvm::ELF;
  if (bytes.size() < sizeof(Elf32_Ehdr) || std::memcmp(bytes.data(), ElfMagic, 4) != 0 ||
      bytes[EI_DATA] != ELFDATA2LSB)
    return std::nullopt;
  if (bytes[EI_CLASS] == ELFCLASS32) return widen(loadAt<Elf32_Ehdr>(bytes), 4);
  if (bytes[EI_CLASS] == ELFCLASS64 && bytes.size() >= sizeof(Elf64_Ehdr)) return widen(loadAt<Elf64_Ehdr>(bytes), 8);
  return std::nullopt;
}

size_t elfProgramHeaderSize(unsigned wordSize) {
  return wordSize == 4 ? sizeof(llvm::ELF::Elf32_Phdr) : sizeof(llvm::ELF::Elf64_Phdr);
}

ElfProgramHeader parseElfProgramHeader(std::span<const uint8_t> bytes, unsigned wordSize) {
  if (wordSize == 4) return widen(loadAt<llvm::ELF::Elf32_Phdr>(bytes));
  return widen(loadAt<llvm::ELF::Elf64_Phdr>(bytes));
}

std::optional<ElfImageHeaders> readElfHeaders(const MemorySource &memory, uint64_t base, size_t maxProgramHeaders) {
  uint8_t head[sizeof(llvm::ELF::Elf64_Ehdr)];
  // An ELF32 header is shorter: the last bytes of a mapping may end it.
  size_t readable = memory.read(base, head) ? sizeof head : sizeof(llvm::ELF::Elf32_Ehdr);
  if (readable < sizeof head && !memory.read(base, std::span(head, readable))) return std::nullopt;
  std::optional<ElfFileHeader> file = parseElfFileHeader(std::span<const uint8_t>(head, readable));
  size_t entrySize = file ? elfProgramHeaderSize(file->wordSize) : 0;
  if (!file || file->phentsize != entrySize || file->phnum > maxProgramHeaders) return std::nullopt;
  std::vector<uint8_t> table(file->phnum * entrySize);
  if (!memory.read(base + file->phoff, table)) return std::nullopt;
  ElfImageHeaders headers{*file, {}};
  for (size_t i = 0; i < file->phnum; ++i)
    headers.programHeaders.push_back(parseElfProgramHeader(std::span(table).subspan(i * entrySize), file->wordSize));
  return headers;
}

uint64_t lowestLoadAddress(const std::vector<ElfProgramHeader> &headers) {
  uint64_t lowest = UINT64_MAX;
  for (const ElfProgramHeader &ph : headers)
    if (ph.type == llvm::ELF::PT_LOAD) lowest = std::min(lowest, ph.vaddr & ~uint64_t(0xfff));
  return lowest == UINT64_MAX ? 0 : lowest;
}

} // namespace stackwalk
