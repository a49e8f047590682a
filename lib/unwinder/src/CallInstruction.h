// Whether the bytes before a return address form a call instruction: the test
// that keeps a stack scan from taking any code pointer for a return address.
#pragma once

#include "stackwalk/core/Target.h"

#include <optional>

namespace stackwalk {

enum class CallBefore {
  Yes,
  No,
  Unknown, // neither the dump nor a module file holds the bytes before it
};
// `returnAddress` as it was stored: with arm64's pointer-authentication bits, or
// ARM's Thumb bit, which says which instruction set the call is in.
CallBefore callBefore(const Target &target, uint64_t returnAddress);

// Where the arm64 `bl` right before `returnAddress` goes; nullopt when the
// instruction there is no `bl` (a `blr`, another, or unreadable).
std::optional<uint64_t> arm64DirectCallTarget(const Target &target, uint64_t returnAddress);

// i386 position-independent code starts by calling a thunk that returns at
// once (__x86.get_pc_thunk.bx and its kin: `mov (%esp), reg; ret`), leaving the
// call's return address behind as a dead word: where the call before
// `returnAddress` is one, the thunk's address; nullopt otherwise.
constexpr uint64_t PcThunkSize = 4;
std::optional<uint64_t> pcThunkCalledBefore(const Target &target, uint64_t returnAddress);

} // namespace stackwalk
