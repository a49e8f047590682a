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
// `returnAddress` as it was stored: with arm64's pointer-authentication bits, or
// ARM's Thumb bit, which says which instruction set the call is in.
CallBefore callBefore(const Target &target, uint64_t returnAddress);

} // namespace stackwalk
