// A PDB's public symbols, checked before LLVM 19 looks one up. Its
// SymbolCache::findPublicSymbolBySectOffset binary-searches the publics
// stream's address map and decodes each record it visits with cantFail: a
// record whose name runs past the symbol record stream fails to decode, and
// cantFail on an error is unreachable code in a release build (undefined
// behaviour; fuzz_pdb saw the error and its message leak:
// fuzz/findings/llvm19-pdb-open-leak-9cdca142). A PDB with a public that does
// not decode as one is refused.
#pragma once

#include "llvm/Support/Error.h"

namespace llvm::pdb {
class PDBFile;
}

namespace stackwalk {

// Every record the publics stream's address map names decodes as a public
// symbol (those that cannot be read at all LLVM skips itself).
llvm::Error checkPublicSymbols(llvm::pdb::PDBFile &file);

} // namespace stackwalk
