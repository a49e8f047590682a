// 32-bit x86 Windows decorates C names in COFF symbol tables and in a PDB's
// public symbols: _name (cdecl), _name@8 (stdcall, with its parameter bytes),
// @name@8 (fastcall). LLVM's PDB reader gives these linkage names, and none of
// LLVM's demanglers removes the decoration (microsoftDemangle reads C++'s
// ?-names only), so stackwalk does, as WinDbg and Breakpad's dump_syms show
// such names: as the source spells them.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>

namespace stackwalk {

// `name` without its C decoration; other names (C++'s ?-names, anything
// else) unchanged.
std::string undecoratedX86Name(llvm::StringRef name);

} // namespace stackwalk
