// A PDB's functions, lines and inlined calls at an RVA, for a module whose
// image is not at hand: LLVM's PDBContext needs the COFF image (only for its
// base address), so these are the same lookups made on the PDB session alone.
#pragma once

#include "stackwalk/core/SourceFrame.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace llvm::pdb {
class IPDBSession;
}

namespace stackwalk {

// Innermost inlined call first, the function last; functionStart is an RVA.
// Empty when no function or public symbol covers the RVA.
std::vector<SourceFrame> pdbFramesAt(llvm::pdb::IPDBSession &session, uint32_t rva);

} // namespace stackwalk
