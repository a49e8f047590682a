// Microsoft symbol stores keep files compressed as cabinets under the name
// with its last character replaced by '_' (foo.pd_ for foo.pdb: symstore.exe
// /compress, and the public servers for some files). libmspack reads them.
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace stackwalk {

// The name a store gives a file compressed: "foo.pdb" -> "foo.pd_".
std::string compressedName(const std::string &name);

// Extracts the file named `name` (any case; or the only file) of the cabinet
// at `cabinet` to `output`; an error when there is none, it is larger than
// maxBytes, or the cabinet is damaged.
llvm::Error extractFromCabinet(const std::string &cabinet, const std::string &name, const std::string &output,
                               uint64_t maxBytes);

} // namespace stackwalk
