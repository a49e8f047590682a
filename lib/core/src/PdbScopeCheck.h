// The modules' symbol streams of a PDB, checked as LLVM 19 walks them to find a
// function's inlined calls (NativeFunctionSymbol::findInlineFramesByVA): from a
// procedure's record to the record its End names, hopping over each inline
// site to the record its own End names, reading each inline site with
// cantFail. LLVM follows those offsets unchecked: an End that names no later
// record of the stream, or lies past its enclosing scope's, loops for ever
// (fuzz_pdb found it), and an inline site that does not read is undefined
// behaviour. Also each module's stream number, which LLVM 19 opens unchecked,
// and the section each of its line tables names (checkLineSections).
#pragma once

#include "llvm/Support/Error.h"

namespace llvm::pdb {
class NativeSession;
}

namespace stackwalk {

llvm::Error checkModuleScopes(llvm::pdb::NativeSession &session);

} // namespace stackwalk
