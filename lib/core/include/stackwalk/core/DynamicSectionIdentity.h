// A file's identity checked by its dynamic section, for ELF modules whose dump
// records no build-id but holds the dynamic section they had loaded (qemu-user's
// cores leave every ELF header page out, the build-id note with it).
#pragma once

#include "stackwalk/core/Module.h"

#include <optional>
#include <string>

namespace stackwalk {

// Why `image` is not the module whose dynamic section the dump holds: its own
// dynamic section lies elsewhere once loaded at the module's base, or differs.
// nullopt when it agrees, or when the dump holds no dynamic section to compare.
std::optional<std::string> dynamicSectionMismatch(const Module &module, const ModuleImage &image);

} // namespace stackwalk
