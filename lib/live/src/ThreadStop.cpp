#include "ThreadStop.h"

#include "ProcessTasks.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include <algorithm>
#include <cstring>
#include <cerrno>
#include <csignal>
#include <elf.h>
#include <fstream>
#include <string>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <thread>

namespace stackwalk::live {
namespace {

// A thread that does not stop within this (asleep in the kernel where a
// ptrace stop cannot reach it, as on a hung NFS mount) is not walked.
constexpr auto StopTimeout = std::chrono::seconds(2);
constexpr int MaxSeizeRounds = 100; // threads appearing while others are stopped

std::string ptraceScope() {
  std::ifstream file("/proc/sys/kernel/yama/ptrace_scope");
  std::string scope;
  return file >> scope ? scope : "";
}

llvm::Error notPermitted(pid_t pid) {
  std::string why = "not permitted to trace process " + std::to_string(pid) +
                    ": run stackwalk as the process's user with CAP_SYS_PTRACE, or as root";
  std::string scope = ptraceScope();
  if (scope == "1") why += " (Yama's ptrace_scope is 1: only a parent may trace its children without it)";
  if (scope == "2") why += " (Yama's ptrace_scope is 2: only CAP_SYS_PTRACE may trace)";
  if (scope == "3") why += " (Yama's ptrace_scope is 3: no process may be traced until reboot)";
  return fail(why);
}

} // namespace

llvm::Expected<std::unique_ptr<ThreadStop>> ThreadStop::stop(pid_t pid, bool fpState) {
  if (HostArch == Arch::Unknown) return fail("reading a live process is not implemented on this machine's architecture");
  std::unique_ptr<ThreadStop> stop(new ThreadStop(pid, fpState));
  stop->firstStop_ = std::chrono::steady_clock::now();
  stop->held_ = true;
  for (int round = 0; round < MaxSeizeRounds; ++round) {
    auto added = stop->seizeNewThreads();
    if (!added) return added.takeError(); // the destructor lets the seized ones go
    if (*added == 0) break;
  }
  if (stop->threads_.empty()) return fail("process " + std::to_string(pid) + " has no thread that could be stopped");
  return stop;
}

llvm::Expected<size_t> ThreadStop::seizeNewThreads() {
  size_t first = threads_.size();
  for (pid_t tid : listTasks(pid_)) {
    bool held = std::any_of(threads_.begin(), threads_.end(), [&](const StoppedThread &t) { return t.tid == tid; });
    // Seized already, it is traced by stackwalk: seizing it again fails with EPERM.
    if (held || std::find(notStopped_.begin(), notStopped_.end(), tid) != notStopped_.end()) continue;
    if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
      if (errno == ESRCH) continue; // exited meanwhile
      if (errno == EPERM && !taskAlive(pid_, tid)) continue; // exiting
      if (errno == EPERM) return notPermitted(pid_);
      return fail("could not trace thread " + std::to_string(tid) + " of process " + std::to_string(pid_) + ": " +
                  std::strerror(errno));
    }
    ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
    threads_.push_back({.tid = tid, .pendingSignal = 0, .registers = RegisterFile(HostArch), .userRegs = {},
                        .fpState = {}, .fpRegs = {}, .xstate = {}});
  }
  // Wait for this round's stops before listing again: a stopped thread
  // starts no new one.
  size_t added = 0;
  for (size_t i = first; i < threads_.size();) {
    if (awaitStop(threads_[i])) {
      ++i, ++added;
      continue;
    }
    notStopped_.push_back(threads_[i].tid);
    threads_.erase(threads_.begin() + i);
  }
  return added;
}

bool ThreadStop::awaitStop(StoppedThread &thread) {
  auto deadline = std::chrono::steady_clock::now() + StopTimeout;
  int status = 0;
  for (;;) {
    pid_t got = waitpid(thread.tid, &status, __WALL | WNOHANG);
    if (got == thread.tid) break;
    if (got < 0 || std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (!WIFSTOPPED(status)) return false; // exited or killed
  // PTRACE_EVENT_STOP is the interrupt's stop; a plain stop with a signal is
  // a signal-delivery stop: the signal is handed back when detaching.
  if (status >> 16 != PTRACE_EVENT_STOP) thread.pendingSignal = WSTOPSIG(status);
  uint8_t regs[1024];
  iovec io{regs, sizeof regs};
  if (ptrace(PTRACE_GETREGSET, thread.tid, reinterpret_cast<void *>(NT_PRSTATUS), &io) == 0) {
    thread.userRegs.assign(regs, regs + io.iov_len);
    if (auto registers = elfcore::parseUserRegs(thread.userRegs, HostArch)) thread.registers = *registers;
  }
  io = {regs, sizeof regs};
  if (readsFpState_ && HostArch == Arch::X86_64 &&
      ptrace(PTRACE_GETREGSET, thread.tid, reinterpret_cast<void *>(NT_PRFPREG), &io) == 0) {
    thread.fpRegs.assign(regs, regs + io.iov_len);
    thread.fpState = FxsaveArea::parse(thread.fpRegs);
    std::vector<uint8_t> xstate(16 << 10); // 2.7 KiB with AVX-512; what the kernel's size may become
    io = {xstate.data(), xstate.size()};
    if (thread.fpState && ptrace(PTRACE_GETREGSET, thread.tid, reinterpret_cast<void *>(NT_X86_XSTATE), &io) == 0) {
      xstate.resize(io.iov_len);
      thread.fpState->addXsave(xstate);
      thread.xstate = std::move(xstate);
    }
  }
  return true;
}

// A seized thread that did not stop in time may have stopped since (a vfork
// parent, asleep in the kernel until its child execs or exits): detached now,
// its signal given back. One still asleep cannot be detached (the kernel
// detaches only a stopped tracee); it stays traced until it stops, then
// until stackwalk exits, when the kernel lets it go.
void ThreadStop::letGoIfStopped(pid_t tid) {
  int status = 0;
  if (waitpid(tid, &status, __WALL | WNOHANG) != tid || !WIFSTOPPED(status)) return;
  int signal = status >> 16 == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
  ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void *>(intptr_t(signal)));
}

std::chrono::microseconds ThreadStop::resume() {
  if (!held_) return pause_;
  for (const StoppedThread &thread : threads_)
    ptrace(PTRACE_DETACH, thread.tid, nullptr, reinterpret_cast<void *>(intptr_t(thread.pendingSignal)));
  for (pid_t tid : notStopped_) letGoIfStopped(tid);
  held_ = false;
  pause_ = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - firstStop_);
  return pause_;
}

} // namespace stackwalk::live
