// Code generated at run time and described through the GDB JIT interface:
// the process's `__jit_debug_descriptor` lists in-memory object files (ELF,
// as LLVM's ORC and other JITs register them) with their symbols and .eh_frame.
#pragma once

#include "stackwalk/core/Target.h"

namespace stackwalk {

// Adds a module for each object registered in the target's
// __jit_debug_descriptor (found through the module files' symbol tables).
// Bounded and cycle-safe; what cannot be read becomes a warning in `warnings`.
void addGdbJitModules(Target &target, std::vector<std::string> &warnings);

} // namespace stackwalk
