#include "stackwalk/core/Module.h"

#include <algorithm>
#include <array>

namespace stackwalk {

std::string_view Module::symbolSource() const {
  std::string_view fromImage = image ? image->symbolSource()
                               : !pdbPath.empty() ? "pdb"
                               : !exportedFunctions.empty() ? "dynsym"
                                                           : "none";
  // DWARF over the dump's budget is not read: names come from a symbol table.
  if (fromImage == "dwarf" && debugInfoRefused) {
    const ModuleImage *debug = image->debugImage();
    fromImage = image->hasSymbolTable() || (debug && debug->hasSymbolTable()) ? "symtab" : "dynsym";
  }
  // A symbol file is the debug info of a module whose image has none.
  if (symbolFile && fromImage != "pdb" && fromImage != "dwarf") return "breakpad";
  return fromImage;
}

std::string Module::breakpadDebugId() const {
  if (!debugId.empty()) return debugId;
  if (buildId.empty()) return "";
  std::array<uint8_t, 16> guid{};
  std::copy_n(buildId.begin(), std::min(buildId.size(), guid.size()), guid.begin());
  return pdbDebugId(guid, 0);
}

std::string Module::breakpadDebugFile() const {
  const std::string &path = debugFile.empty() ? name : debugFile;
  size_t slash = path.find_last_of("\\/");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace stackwalk
