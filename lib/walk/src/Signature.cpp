#include "stackwalk/walk/Signature.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/walk/FunctionName.h"

#include <algorithm>
#include <string_view>

namespace stackwalk {
namespace {

// Functions that sit on top of many different crashes and so say nothing
// about which crash this is: how a process aborts, raises a signal, fails an
// assertion, throws, or dispatches an exception. Matched on the function name
// without parameters.
constexpr std::string_view Skipped[] = {
    // glibc: raise / abort / assert
    "raise", "__GI_raise", "abort", "__GI_abort", "__pthread_kill_implementation", "__pthread_kill_internal",
    "pthread_kill", "__pthread_kill", "___pthread_kill", "__assert_fail", "__GI___assert_fail", "__assert_fail_base",
    "__libc_message", "__fortify_fail", "__stack_chk_fail", "__chk_fail", "malloc_printerr",
    // C++ runtime: terminate and throw
    "std::terminate", "__cxxabiv1::__terminate", "__gnu_cxx::__verbose_terminate_handler", "__cxa_throw",
    "__cxa_rethrow", "__cxa_call_terminate", "_Unwind_RaiseException", "_Unwind_Resume",
    // Windows: exception dispatch and fail-fast
    "KiUserExceptionDispatcher", "RtlRaiseException", "RaiseException", "NtRaiseException", "RtlDispatchException",
    "RaiseFailFastException", "__fastfail", "DbgBreakPoint",
};

bool skipped(const ReportFrame &frame) {
  std::string name = signatureName(frame.function);
  return std::find(std::begin(Skipped), std::end(Skipped), name) != std::end(Skipped);
}

// The .NET runtime's Frames where a managed exception was raised (by a throw,
// or by a fault in managed code).
bool raisesManagedException(const ReportFrame &frame) {
  return frame.kind == FrameKind::Runtime &&
         (frame.frameName == "SoftwareExceptionFrame" || frame.frameName == "FaultingExceptionFrame");
}

std::string frameName(const ReportFrame &frame, bool trustUncheckedFiles) {
  if (frame.kind == FrameKind::Runtime) return "[" + frame.frameName + "]";
  // Managed code lies outside every module; its assembly names it.
  const std::string &module = frame.module ? frame.module->name : frame.moduleName;
  if (module.empty()) return "?";
  bool trusted = trustUncheckedFiles || !frame.module || !frame.module->identityUnchecked;
  if (!frame.function.empty() && trusted) return module + "!" + signatureName(frame.function);
  // Unnamed: where in its module, which stays put whatever the load address.
  return frame.module ? module + "+" + hex(frame.ip - frame.module->base) : module + "!?";
}

using FrameIterator = std::vector<ReportFrame>::const_iterator;

std::string joined(FrameIterator first, FrameIterator last, size_t frameCount, bool withRuntimeFrames,
                   bool trustUncheckedFiles) {
  std::string out;
  for (auto it = first; it != last && frameCount; ++it) {
    if (it->kind == FrameKind::Runtime && !withRuntimeFrames) continue;
    out += (out.empty() ? "" : " < ") + frameName(*it, trustUncheckedFiles);
    --frameCount;
  }
  return out;
}

// Environment.FailFast: managed code asking the runtime to end the process
// at once, the managed abort (its overloads call one another).
bool failsFast(const ReportFrame &frame) {
  return frame.kind == FrameKind::Managed && signatureName(frame.function) == "System.Environment.FailFast";
}

// A crash the runtime makes of managed code: an unhandled managed exception,
// where the runtime's own frames sit above the Frame that marks the raise, or
// Environment.FailFast, above which they write the crash dump and abort. No
// managed code runs above either (a crash in a catch handler has the handler
// above the throw's Frame). The signature then starts at the managed method
// that raised the exception, or at FailFast's caller.
FrameIterator managedCrash(FrameIterator first, FrameIterator last) {
  for (auto it = first; it != last; ++it) {
    if (raisesManagedException(*it))
      return std::find_if(it, last, [](const ReportFrame &f) { return f.kind == FrameKind::Managed; });
    if (it->kind == FrameKind::Managed)
      return failsFast(*it) ? std::find_if_not(it, last, failsFast) : last;
  }
  return last;
}

} // namespace

std::string threadSignature(const ReportThread &thread, size_t frameCount, bool trustUncheckedFiles) {
  // Start after the deepest skipped frame near the top: what lies above it is
  // the crash machinery (including its unnamed helpers, like libstdc++'s
  // terminate handler without symbols).
  constexpr size_t Window = 12;
  auto first = thread.frames.begin();
  for (auto it = thread.frames.begin(); it != thread.frames.end() && it - thread.frames.begin() < ptrdiff_t(Window); ++it)
    if (skipped(*it)) first = it + 1;
  // A stack of nothing but skipped frames still has a signature: its own.
  if (first == thread.frames.end()) first = thread.frames.begin();
  if (auto crash = managedCrash(thread.frames.begin(), thread.frames.end()); crash != thread.frames.end()) first = crash;
  return joined(first, thread.frames.end(), frameCount, /*withRuntimeFrames=*/false, trustUncheckedFiles);
}

std::string topFrames(const ReportThread &thread, size_t frameCount) {
  // A display of what the walk shows, names from unchecked files included.
  return joined(thread.frames.begin(), thread.frames.end(), frameCount, /*withRuntimeFrames=*/true,
                /*trustUncheckedFiles=*/true);
}

} // namespace stackwalk
