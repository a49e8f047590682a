// Crash signatures for bucketing: the top frames of a thread, named by module
// and function, free of addresses, so one crash gives one signature across
// runs, machines and address-space layouts.
#pragma once

#include "stackwalk/walk/Report.h"

#include <string>

namespace stackwalk {

// `module!function < module!function < ...` of the thread's first frames
// after the ones every crash of a kind shares: within the top 12 frames,
// everything down to the deepest frame of the raise, abort, assertion,
// terminate, throw and exception-dispatch machinery; for an unhandled .NET
// exception, everything above the managed method that raised it (see README).
// Functions are named as signatureName gives them (FunctionName.h); a frame
// without a name is `module+0xOFFSET` (its place in the module, which no load
// address changes), a managed one `Assembly.dll!?`, one outside every module
// `?`; the .NET runtime's Frames are left out. A file used although the dump
// records no identity to check it against (Module::identityUnchecked) may be
// another build than the crashed one: its frames are `module+0xOFFSET`
// unless `trustUncheckedFiles`.
std::string threadSignature(const ReportThread &thread, size_t frameCount, bool trustUncheckedFiles = false);

// The thread's first frames, none skipped, in the same notation, runtime
// Frames as `[InlinedCallFrame]` (--summary).
std::string topFrames(const ReportThread &thread, size_t frameCount);

} // namespace stackwalk
