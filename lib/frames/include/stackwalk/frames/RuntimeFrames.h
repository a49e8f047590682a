// The runtime's capital-F Frames (dotnet/runtime
// docs/design/datacontracts/StackWalk.md, "Capital 'F' Frame Handling"):
// records the runtime links into a per-thread chain at every transition
// between managed and native code. Each starts with a FrameIdentifier that
// the `<Type>Identifier` globals name; several carry the registers of the
// managed code they interrupted, which carries a walk over code that native
// unwinding cannot cross.
#pragma once

#include "stackwalk/core/Registers.h"
#include "stackwalk/frames/RuntimeData.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk::frames {

struct RuntimeFrame {
  uint64_t address = 0;
  uint64_t identifier = 0;
  std::string name; // "InlinedCallFrame"; empty when no global names the identifier
};

// The thread's Frame chain from Thread.Frame, innermost first. Stops (with
// an error kept in `problem`) at unreadable memory, a loop or a Frame that
// does not move up the stack.
struct FrameChain {
  std::vector<RuntimeFrame> frames;
  std::string problem;
};
FrameChain readFrameChain(const RuntimeData &data, uint64_t firstFrame);

// Whether the Frame is a HijackFrame (a GC suspension's hijacked return).
bool isHijackFrame(const RuntimeFrame &frame);
// Where the HijackFrame at `frame` has its registers (HijackArgs): on the
// stack of the runtime's hijack stub, which pushed them before it called into
// the runtime, whose function then pushed the Frame below them.
llvm::Expected<uint64_t> hijackArgsAddress(const RuntimeData &data, uint64_t frame);

// The registers at the managed code the Frame returns to, starting from
// `regs` (the walk's current registers), as the runtime's
// UpdateRegDisplay does for the Frame's type; nullopt when the Frame
// carries no context (or no active call). Registers the Frame does not
// restore become unknown, except where the runtime keeps them.
llvm::Expected<std::optional<RegisterFile>> contextFromFrame(const RuntimeData &data, const RuntimeFrame &frame,
                                                             const RegisterFile &regs, OS os);

// GetMethodDescPtr for a Frame, where this runtime's descriptor publishes
// the field that holds it; 0 otherwise.
uint64_t frameMethodDesc(const RuntimeData &data, const RuntimeFrame &frame);

} // namespace stackwalk::frames
