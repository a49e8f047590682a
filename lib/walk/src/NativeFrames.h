// Names for native code: a physical frame becomes its inlined calls and then
// the function itself, from the module's debug info and symbols; code outside
// every module is named by what registered it at run time.
#pragma once

#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/debuginfo/TailCalls.h"
#include "stackwalk/walk/RegisteredCode.h"
#include "stackwalk/walk/Report.h"

#include <optional>
#include <vector>

namespace stackwalk {

// Appends the frame's entries to a thread's, innermost inlined call first,
// numbered on. With `arguments` (one list per DWARF function at the frame,
// as FrameArguments reads them), each entry gets its function's, when the
// two chains agree.
void appendNativeEntries(std::vector<ReportFrame> &entries, const Frame &frame, Symbolizer &symbolizer,
                         const RegisteredCode &registered, std::vector<std::vector<FunctionArgument>> *arguments);

// Frames for the functions that tail-called `callee` (TailCalls.h), in its
// module, innermost first: they go after its entries, before its caller's
// (whose stack pointer they share).
void appendTailCallEntries(std::vector<ReportFrame> &entries, const std::vector<TailCallFrame> &tailCalls,
                           const Frame &callee, uint64_t callerSp, Symbolizer &symbolizer);

// How far `ip` lies into the function a symbolizer entry names; nullopt when
// the entry has no start or starts above ip.
std::optional<uint64_t> offsetInFunction(const SourceFrame &source, const Module &module, uint64_t ip);

} // namespace stackwalk
