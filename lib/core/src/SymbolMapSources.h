// What a symbol map (SymbolMap.h) is made from, read from an ELF image's
// symbol tables and DWARF by Symbolizer::makeSymbolMap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace llvm {
class DWARFContext;
}

namespace stackwalk {

class DwarfUnitCheck;
class ModuleImage;
class SymbolMapWriter;

// Where the Symbolizer's answer for an ELF image can change: every address at
// which something it reads starts or ends. LLVM's symbolizer picks the
// symbol that starts last at or before an address (and drops it past its
// size), the compile unit by .debug_aranges or the units' ranges, the
// subprogram and inlined calls whose ranges hold the address (a function's
// start is its DW_AT_low_pc), and the line row last at or before it; so
// between two consecutive boundaries of all of these its answer is one.
//
// The sorted boundaries, 0 first. `dwarf` (with its unit check) is the DWARF
// the Symbolizer reads for the image, or null; units the check refuses are
// not read (the Symbolizer names their addresses from the symbol table).
// Nullopt past maxBoundaries, or when a unit's DWARF lies in another file
// (split DWARF) that the map could not follow.
std::optional<std::vector<uint64_t>> symbolMapBoundaries(const ModuleImage &image, llvm::DWARFContext *dwarf,
                                                         DwarfUnitCheck *units, size_t maxBoundaries);

// What a symbol map keeps of an image's call-site records (SymbolMap.h), so
// that a walk with the map knows, without the DWARF, between which frames
// no tail call can lie: lib/debuginfo's TailCalls.cpp looks for tail calls
// only from the function a call's record names (found by name in the
// callee's module when the record names a declaration), and finds none
// unless that function's DIEs hold a tail call's record. Units the check refuses are left out, as the walk leaves them.
void addCallSites(const ModuleImage &image, llvm::DWARFContext &dwarf, DwarfUnitCheck &units, SymbolMapWriter &out);

} // namespace stackwalk
