// Finding .eh_frame in a loaded ELF image whose headers do not locate it. A
// static executable linked without --eh-frame-hdr (GCC's default for -static)
// loads its .eh_frame with its read-only data, but neither PT_GNU_EH_FRAME nor
// any loaded section header says where; libgcc finds it at run time through
// crtbeginT.o's registration, which names it by a symbol the process does not
// map. So the bytes are searched for what a linker writes there: a chain of
// CIE and FDE records, each FDE pointing back at a CIE of the chain, ended by
// a zero length word. LLVM parses a section it is given (DWARFDebugFrame) but
// finds none, so the search is ours; LLVM's parser then checks what was found,
// and every FDE must describe code the image maps.
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace stackwalk {

// [begin, end) file virtual addresses of the image's executable segments.
struct CodeRange {
  uint64_t begin, end;
};

// Where .eh_frame lies within the bytes searched, its zero terminator included.
struct EhFrameBounds {
  uint64_t offset, size;
};

// The longest chain of CIE and FDE records in `bytes` (a segment's bytes,
// loaded at file virtual address `address`) that LLVM parses and whose FDEs all
// describe code in `code`; none when no chain qualifies.
std::optional<EhFrameBounds> findEhFrame(llvm::ArrayRef<uint8_t> bytes, uint64_t address, unsigned addressSize,
                                         llvm::Triple::ArchType arch, const std::vector<CodeRange> &code);

} // namespace stackwalk
