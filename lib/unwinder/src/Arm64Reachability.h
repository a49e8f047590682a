// Whether arm64 code entered at an address can reach another without
// returning: the instructions a call to `entry` runs, followed through direct
// branches and tail calls (b, b.cond, cbz/cbnz, tbz/tbnz) and past each call
// (bl, blr: they return), to each ret; through a PLT stub to the function its
// GOT slot holds in the dump. Used to tell a stale link register: lr after
// `bl T` is the interrupted frame's return address only if T's code leads to
// the frame's pc (busybox for arm64 has no unwind tables and no symbols, and
// its lr after `bl memcpy@plt` or a local leaf call was taken as a caller).
//
// The instruction forms are matched by their encodings (the Arm ARM's
// "Branches, exception generating and system instructions" class); no
// library here decodes arm64 (LLVM's AArch64 disassembler would come with its
// whole MC layer's start-up cost, PltStubs.h).
#pragma once

#include <cstdint>
#include <optional>

namespace stackwalk {

class Target;

// True where `pc` is reached; false where every path from `entry` ends in a
// return or a trap without reaching it; nullopt where that cannot be told: an
// indirect jump (br: a jump table or an indirect tail call), code neither
// the dump nor a file holds, or more than a bounded number of instructions.
std::optional<bool> arm64MayReach(const Target &target, uint64_t entry, uint64_t pc);

} // namespace stackwalk
