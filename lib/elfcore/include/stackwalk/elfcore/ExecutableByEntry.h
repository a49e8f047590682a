// The modules of a core whose memory holds no ELF header of the executable
// and no NT_FILE note (qemu-user's cores): the executable's file, found as any
// module's is (-e, --module-path, --sysroot, the path AT_EXECFN records), is
// placed by the entry point (AT_ENTRY minus its e_entry, as gdb places a PIE);
// its dynamic section, read from the dump there, leads to the link map and the
// shared libraries. Each file is checked by its dynamic section
// (DynamicSectionIdentity.h), the only identity such a dump keeps; a static
// executable, which has none, by its read-only data (UnwrittenDataIdentity.h).
#pragma once

#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/core/Target.h"

namespace stackwalk::elfcore {

// Adds the modules to a Linux core that has none for its entry point; says in
// the target's warnings what could not be placed and why.
void placeModulesByEntryPoint(Target &target, const ModuleResolver &resolver);

} // namespace stackwalk::elfcore
