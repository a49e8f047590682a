// A DWARF-typed object's bytes as gdb prints them: integers in decimal, chars
// as `113 'q'`, bools, enumerators by name, pointers in hex (with the string
// a char pointer points to), floating point, and structs, unions and arrays
// by their members. Parts whose bytes are unknown print as <optimized out>.
#pragma once

#include "ObjectBytes.h"

#include "llvm/DebugInfo/DWARF/DWARFDie.h"

#include <optional>
#include <string>

namespace stackwalk {

// The type as C declares it: "int", "struct point", "const char *".
std::string typeName(const llvm::DWARFDie &type);

// The object's size in bytes; nullopt when the type does not say.
std::optional<uint64_t> typeSize(const llvm::DWARFDie &type, unsigned addressSize);

// nullopt when the object's value cannot be shown (scalars with unknown
// bytes, large objects not read); `object.problem` says why.
std::optional<std::string> formatValue(const llvm::DWARFDie &type, const ObjectBytes &object,
                                       const MemorySource &memory, unsigned addressSize);

} // namespace stackwalk
