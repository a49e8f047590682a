// Every thread of a process held in a ptrace stop: PTRACE_SEIZE and
// PTRACE_INTERRUPT, which unlike PTRACE_ATTACH send no SIGSTOP the process
// could see, repeated until no thread appears that is not held; each held
// thread's registers read with PTRACE_GETREGSET. If stackwalk dies while
// holding them, the kernel detaches them and they run on.
#pragma once

#include "stackwalk/core/FxsaveArea.h"
#include "stackwalk/core/Registers.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <sys/types.h>
#include <vector>

namespace stackwalk::live {

// The machine stackwalk runs on: a traced process's registers are in its layout.
#if defined(__x86_64__)
constexpr Arch HostArch = Arch::X86_64;
#elif defined(__aarch64__)
constexpr Arch HostArch = Arch::Arm64;
#else
constexpr Arch HostArch = Arch::Unknown;
#endif

struct StoppedThread {
  pid_t tid = 0;
  int pendingSignal = 0; // a signal it was about to take, given back at resume
  RegisterFile registers;
  std::vector<uint8_t> userRegs; // as PTRACE_GETREGSET gave them, for a core file
  std::optional<FxsaveArea> fpState; // x86-64, when asked for: NT_PRFPREG
  std::vector<uint8_t> fpRegs;       // the same as PTRACE_GETREGSET gave it, for a core file
  std::vector<uint8_t> xstate;       // NT_X86_XSTATE as PTRACE_GETREGSET gave it (its AVX part is in fpState)
};

class ThreadStop {
public:
  // With fpState, the threads' x87 and SSE registers are read too (x86-64).
  static llvm::Expected<std::unique_ptr<ThreadStop>> stop(pid_t pid, bool fpState = false);
  ~ThreadStop() { resume(); }

  const std::vector<StoppedThread> &threads() const { return threads_; }
  // Threads that exited while being stopped, or did not stop in time (asleep
  // in the kernel where a ptrace stop cannot reach them: letGoIfStopped).
  const std::vector<pid_t> &droppedThreads() const { return notStopped_; }
  // Detaches every thread; the time since the first was stopped. Idempotent.
  std::chrono::microseconds resume();

private:
  ThreadStop(pid_t pid, bool fpState) : pid_(pid), readsFpState_(fpState) {}
  // Seizes and interrupts the threads in /proc/PID/task not held yet; how many.
  llvm::Expected<size_t> seizeNewThreads();
  // Waits for a seized thread's stop and reads its registers; false if it exited.
  bool awaitStop(StoppedThread &thread);
  static void letGoIfStopped(pid_t tid);

  pid_t pid_;
  bool readsFpState_;
  std::vector<StoppedThread> threads_;
  std::vector<pid_t> notStopped_; // seized, but exited or did not stop in time
  bool held_ = false;
  std::chrono::steady_clock::time_point firstStop_;
  std::chrono::microseconds pause_{0};
};

} // namespace stackwalk::live
