// LLVM's native PDB reader, opened on a PDB that it can be handed: LLVM 19
// sizes memory by the superblock's block count and the named-stream map's
// capacity as claimed; its NativeSession resolves a section contribution
// whose section number lies beyond the section headers by reading the header
// one past the last (with none at all, a null read), which fuzz_pdb found
// crashing on the first RVA lookup; its named-stream map is read trusting its
// bucket numbers and string offsets; a contribution's module number, a
// module's stream number and the scopes of its symbols (PdbScopeCheck.h) are
// followed unchecked, a deleted stream it names is read past its (empty)
// block list, and a stream block numbered 0xFFFFFFFF passes its check of
// blocks against the file (PdbStreamCheck.h). Such PDBs are refused here,
// before any lookup.
#pragma once

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace llvm::pdb {
class IPDBSession;
}

namespace stackwalk {

// A session on the PDB's bytes, or why they cannot be read safely.
llvm::Error openPdbSession(std::unique_ptr<llvm::MemoryBuffer> bytes, std::unique_ptr<llvm::pdb::IPDBSession> &session);
// The same on a regular file (readRegularFile).
llvm::Error openPdbSession(const std::string &path, std::unique_ptr<llvm::pdb::IPDBSession> &session);

} // namespace stackwalk
