// The words --unwind-info prints for one CFI entry (CfiUnwinder::describe).
#pragma once

#include "CfiSection.h"

#include <string>
#include <vector>

namespace stackwalk {

// The entry's CIE and FDE as llvm-dwarfdump --eh-frame prints them (the
// FDE's instructions and every row of its table), then the row in force at
// `fileAddress`. Registers are named as gdb names them.
void describeCfiEntry(std::vector<std::string> &out, const CfiSection::Entry &entry, uint64_t fileAddress, Arch arch,
                      bool isEh);

} // namespace stackwalk
