#include "stackwalk/elfcore/UnwrittenDataIdentity.h"

#include "stackwalk/core/ElfHeaders.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>

namespace stackwalk::elfcore {
namespace {

// A file's bytes at a virtual address, as its program header places them.
struct FileRange {
  uint64_t vaddr, offset, size;
};

// The parts of the file the program never writes: its read-only PT_LOAD
// segments and its PT_GNU_RELRO part (inside a writable segment).
std::vector<FileRange> unwrittenRanges(std::span<const uint8_t> file) {
  std::vector<FileRange> ranges;
  auto header = parseElfFileHeader(file);
  if (!header) return ranges;
  constexpr unsigned MostHeaders = 256; // more is no file a linker wrote
  size_t entrySize = elfProgramHeaderSize(header->wordSize);
  for (unsigned i = 0; i < std::min<unsigned>(header->phnum, MostHeaders); ++i) {
    uint64_t at = header->phoff + uint64_t(i) * entrySize;
    if (at > file.size() || file.size() - at < entrySize) break;
    ElfProgramHeader segment = parseElfProgramHeader(file.subspan(at, entrySize), header->wordSize);
    bool readOnlyLoad = segment.type == llvm::ELF::PT_LOAD && !(segment.flags & llvm::ELF::PF_W);
    if (readOnlyLoad || segment.type == llvm::ELF::PT_GNU_RELRO)
      ranges.push_back({segment.vaddr, segment.offset, segment.filesz});
  }
  return ranges;
}

struct WordCount {
  uint64_t compared = 0, equal = 0;
};

// Compares a range's file bytes with the dump's page by page, where the dump
// holds the page, up to `budget` bytes compared in all (a core of qemu-user
// holds no code: a large executable's text must not use it up before RELRO).
void compareRange(const Target &target, std::span<const uint8_t> file, const FileRange &range, uint64_t bias,
                  uint64_t &budget, WordCount &count) {
  constexpr uint64_t Page = 4096, Word = 8;
  std::array<uint8_t, Page> loaded;
  if (range.offset > file.size()) return;
  uint64_t size = std::min(range.size, file.size() - range.offset);
  for (uint64_t done = 0; done < size && budget > 0;) {
    uint64_t address = bias + range.vaddr + done;
    uint64_t piece = std::min({size - done, Page - address % Page, budget});
    if (target.readFromDump(address, std::span(loaded.data(), piece))) {
      budget -= piece;
      for (uint64_t word = 0; word < piece; word += Word) {
        uint64_t length = std::min(Word, piece - word);
        ++count.compared;
        count.equal += std::memcmp(loaded.data() + word, file.data() + range.offset + done + word, length) == 0;
      }
    }
    done += piece;
  }
}

} // namespace

std::optional<std::string> unwrittenDataMismatch(const Target &target, const ModuleImage &image, uint64_t bias) {
  llvm::StringRef bytes = image.object().getData();
  std::span<const uint8_t> file(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  constexpr uint64_t MostCompared = 4 << 20; // enough to tell, bounded for a large executable
  constexpr uint64_t FewestWords = 64;
  uint64_t budget = MostCompared;
  WordCount count;
  for (const FileRange &range : unwrittenRanges(file)) compareRange(target, file, range, bias, budget, count);
  if (count.compared < FewestWords)
    return "the dump holds " + std::to_string(count.compared) + " words of its read-only data, too few to compare";
  if (count.equal * 10 < count.compared * 9)
    return std::to_string(count.compared - count.equal) + " of " + std::to_string(count.compared) +
           " words of its read-only data differ from the dump's";
  return std::nullopt;
}

} // namespace stackwalk::elfcore
