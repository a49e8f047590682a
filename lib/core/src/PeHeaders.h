// A PE32+ image's headers read where they lie in an address space: a module
// the loader mapped (a dump's memory), or an image file read at its own
// virtual addresses. LLVM's COFFObjectFile reads them only from a whole file.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/Object/COFF.h"
#include "llvm/Support/Error.h"

namespace stackwalk {

struct Pe32PlusHeaders {
  uint32_t peOffset = 0;        // IMAGE_DOS_HEADER.e_lfanew
  uint64_t optionalAddress = 0; // where the optional header starts
  llvm::object::coff_file_header file;
  llvm::object::pe32plus_header optional;
};

// The MZ and PE signatures, the file header and a PE32+ optional header at `base`.
llvm::Expected<Pe32PlusHeaders> readPe32PlusHeaders(const MemorySource &memory, uint64_t base);

} // namespace stackwalk
