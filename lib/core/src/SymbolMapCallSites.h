// What a symbol map keeps of an image's call-site records (SymbolMap.h), so
// that a walk with the map knows, without the DWARF, between which frames
// no tail call can lie: lib/debuginfo's TailCalls.cpp looks for tail calls
// only from the function a call's record names (found by name in the
// callee's module when the record names a declaration), and finds none
// unless that function's DIEs hold a tail call's record.
#pragma once

namespace llvm {
class DWARFContext;
}

namespace stackwalk {

class DwarfUnitCheck;
class ModuleImage;
class SymbolMapWriter;

// Units the check refuses are left out, as the walk leaves them.
void addCallSites(const ModuleImage &image, llvm::DWARFContext &dwarf, DwarfUnitCheck &units, SymbolMapWriter &out);

} // namespace stackwalk
