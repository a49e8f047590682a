// Whether the bytes before a return address form a call instruction: the test
// that keeps a stack scan from taking any code pointer for a return address.
#pragma once

#include "stackwalk/core/Target.h"

namespace stackwalk {

enum class CallBefore {
  Yes,
  No,
  Unknown, // neither the dump nor a module file holds the bytes before it
};
CallBefore callBefore(const Target &target, uint64_t returnAddress);

} // namespace stackwalk
