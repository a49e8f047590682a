// Whether the bytes before a return address form a call instruction: the test
// that keeps a stack scan from taking any code pointer for a return address.
#pragma once

#include "stackwalk/core/Target.h"

namespace stackwalk {

bool followsCallInstruction(const Target &target, uint64_t returnAddress);

} // namespace stackwalk
