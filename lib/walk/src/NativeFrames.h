// Names for native code: a physical frame becomes its inlined calls and then
// the function itself, from the module's debug info and symbols; code outside
// every module is named by what registered it at run time.
#pragma once

#include "stackwalk/core/Symbolizer.h"
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

// How far `ip` lies into the function a symbolizer entry names; nullopt when
// the entry has no start or starts above ip.
std::optional<uint64_t> offsetInFunction(const SourceFrame &source, const Module &module, uint64_t ip);

} // namespace stackwalk
