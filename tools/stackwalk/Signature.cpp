#include "Signature.h"

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

std::string_view withoutParameters(std::string_view name) {
  size_t paren = name.find('(');
  return paren == std::string_view::npos ? name : name.substr(0, paren);
}

bool skipped(const ReportFrame &frame) {
  std::string_view name = withoutParameters(frame.function);
  return std::find(std::begin(Skipped), std::end(Skipped), name) != std::end(Skipped);
}

std::string frameName(const ReportFrame &frame) {
  if (!frame.module) return "?";
  return frame.module->name + "!" + (frame.function.empty() ? std::string("?") : std::string(withoutParameters(frame.function)));
}

std::string joined(std::vector<ReportFrame>::const_iterator first, std::vector<ReportFrame>::const_iterator last,
                   size_t frameCount) {
  std::string out;
  for (auto it = first; it != last && frameCount; ++it, --frameCount) out += (out.empty() ? "" : " < ") + frameName(*it);
  return out;
}

} // namespace

std::string threadSignature(const ReportThread &thread, size_t frameCount) {
  // Start after the deepest skipped frame near the top: what lies above it is
  // the crash machinery (including its unnamed helpers, like libstdc++'s
  // terminate handler without symbols).
  constexpr size_t Window = 12;
  auto first = thread.frames.begin();
  for (auto it = thread.frames.begin(); it != thread.frames.end() && it - thread.frames.begin() < ptrdiff_t(Window); ++it)
    if (skipped(*it)) first = it + 1;
  // A stack of nothing but skipped frames still has a signature: its own.
  if (first == thread.frames.end()) first = thread.frames.begin();
  return joined(first, thread.frames.end(), frameCount);
}

std::string topFrames(const ReportThread &thread, size_t frameCount) {
  return joined(thread.frames.begin(), thread.frames.end(), frameCount);
}

} // namespace stackwalk
