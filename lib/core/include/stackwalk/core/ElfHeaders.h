// The file and program headers of a little-endian ELF image of either class
// (ELF32: i386, ARM; ELF64), widened to 64-bit fields, for code that reads
// them from a dump's memory or a core file's bytes. LLVM's ELFFile reads
// whole files of one class chosen at compile time; these are a few headers
// of a class known only at run time.
#pragma once

#include "stackwalk/core/Memory.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

struct ElfProgramHeader {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0, memsz = 0;
};

struct ElfFileHeader {
  unsigned wordSize = 8; // 4 in ELF32
  uint16_t type = 0, machine = 0, phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
  uint64_t entry = 0, phoff = 0, shoff = 0;
};

// The file header at the start of `bytes`: nullopt unless they hold a
// little-endian ELF header of a known class.
std::optional<ElfFileHeader> parseElfFileHeader(std::span<const uint8_t> bytes);
// The size of one program header of the class, and one read from `bytes`
// (which hold at least that many).
size_t elfProgramHeaderSize(unsigned wordSize);
ElfProgramHeader parseElfProgramHeader(std::span<const uint8_t> bytes, unsigned wordSize);

// The headers of an image mapped at `base`, read from memory: nullopt when no
// ELF header is there, its program header table is implausible (more than
// `maxProgramHeaders` entries, or entries of another size) or not readable.
struct ElfImageHeaders {
  ElfFileHeader file;
  std::vector<ElfProgramHeader> programHeaders;
};
std::optional<ElfImageHeaders> readElfHeaders(const MemorySource &memory, uint64_t base, size_t maxProgramHeaders);

// The lowest page a PT_LOAD segment maps (0 without one).
uint64_t lowestLoadAddress(const std::vector<ElfProgramHeader> &headers);

} // namespace stackwalk
