// Stops a child process of this test with threads parked in known places,
// and checks what a walk would be given; the child must run on afterwards.
#include "stackwalk/live/LiveProcess.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <sys/syscall.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace stackwalk;

namespace {

volatile uint64_t marker = 0x5354414b57414c4b; // read back through the live memory
char untouched[1 << 16];                         // .bss that nothing reads while the child is stopped

// A child with three sleeping threads that answers each byte written to
// `requests` with one on `answers`.
pid_t startChild(int requests[2], int answers[2]) {
  pid_t child = fork();
  if (child != 0) return child;
  prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives a test that failed half-way
  close(requests[1]);
  close(answers[0]);
  for (int i = 0; i < 3; ++i) std::thread([] { for (;;) pause(); }).detach();
  char byte;
  while (read(requests[0], &byte, 1) == 1) (void)!write(answers[1], &byte, 1);
  _exit(0);
}

// Whether /proc/PID/task/TID/status says the task is in `state` (Z: exited, D: asleep in the kernel).
bool taskState(pid_t pid, pid_t tid, char state) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string text((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
  return text.find(std::string("State:\t") + state) != std::string::npos;
}

void awaitTaskState(pid_t pid, pid_t tid, char state) {
  while (!taskState(pid, tid, state)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// A child whose main thread, after starting one that sleeps, `leaves` as a
// test wants: by exiting alone, or by staying in vfork() while its child sleeps.
template <class Leave> pid_t startChildWhoseMainThread(Leave leave) {
  pid_t child = fork();
  if (child != 0) return child;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::thread([] { for (;;) pause(); }).detach();
  leave();
  _exit(0);
}

bool anyWarningHas(const std::vector<std::string> &warnings, const std::string &text) {
  return std::any_of(warnings.begin(), warnings.end(), [&](const std::string &w) { return w.find(text) != std::string::npos; });
}

} // namespace

TEST_CASE("a process whose main thread has exited is walked by its other threads") {
  // The exit system call ends the calling thread alone, as pthread_exit does
  // (which would unwind through this test's frames in the child).
  pid_t child = startChildWhoseMainThread([] { syscall(SYS_exit, 0); });
  awaitTaskState(child, child, 'Z');
  auto live = LiveProcess::open(child);
  REQUIRE(bool(live));
  std::unique_ptr<Target> target = (*live)->takeTarget();
  CHECK(anyWarningHas(target->warnings, "main thread (" + std::to_string(child) + ") has exited"));
  auto stopped = (*live)->stop();
  REQUIRE(bool(stopped));
  REQUIRE(stopped->threads.size() == 1);
  CHECK(stopped->threads[0].tid != uint64_t(child));
  CHECK(target->isExecutable(*stopped->threads[0].context.pc())); // its maps, read through the live thread
  CHECK(target->readValue<uint64_t>(uint64_t(&marker)) == marker); // and its memory
  (*live)->resume();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_CASE("a thread that does not stop in time (a vfork parent) is left out and named; the others are walked") {
  pid_t child = startChildWhoseMainThread([] {
    if (vfork() == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      sleep(60);
      _exit(0);
    }
  });
  awaitTaskState(child, child, 'D');
  auto live = LiveProcess::open(child);
  REQUIRE(bool(live));
  auto stopped = (*live)->stop();
  REQUIRE(bool(stopped)); // not "not permitted": the thread seized already is not seized again
  REQUIRE(stopped->threads.size() == 1);
  CHECK(stopped->threads[0].tid != uint64_t(child));
  CHECK(anyWarningHas(stopped->warnings, "thread(s) " + std::to_string(child) + " exited or did not stop in time"));
  (*live)->resume();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_CASE("a live process is stopped, read and resumed") {
  int requests[2], answers[2];
  REQUIRE(pipe(requests) == 0);
  REQUIRE(pipe(answers) == 0);
  pid_t child = startChild(requests, answers);
  char byte = 'a';
  REQUIRE(write(requests[1], &byte, 1) == 1); // the child is up once it answers
  REQUIRE(read(answers[0], &byte, 1) == 1);
  while (std::distance(std::filesystem::directory_iterator("/proc/" + std::to_string(child) + "/task"),
                       std::filesystem::directory_iterator()) < 4)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  auto live = LiveProcess::open(child);
  REQUIRE(bool(live));
  std::unique_ptr<Target> target = (*live)->takeTarget();
  CHECK(target->threads.empty());
  auto stopped = (*live)->stop();
  REQUIRE(bool(stopped));
  target->threads = stopped->threads;
  CHECK(target->format() == "live");
  CHECK(target->process.pid == uint64_t(child));
  REQUIRE(target->threads.size() == 4);
  CHECK(target->threads[0].tid == uint64_t(child));
  for (const ThreadInfo &thread : target->threads) {
    CHECK(thread.context.pc());
    CHECK(target->isExecutable(*thread.context.pc()));
  }
  CHECK(target->readValue<uint64_t>(uint64_t(&marker)) == marker);
  bool sawLibc = false;
  for (const Module &module : target->modules) sawLibc |= module.name.starts_with("libc.so");
  CHECK(sawLibc);
  uint64_t pageAlreadyRead = uint64_t(&marker);

  // The process's perf map is used only when the process's user wrote it.
  std::string perfMap = "/tmp/perf-" + std::to_string(child) + ".map";
  CHECK_FALSE((*live)->perfMap());
  { std::ofstream(perfMap) << "7f0000000000 10 jitted\n"; }
  CHECK((*live)->perfMap() == perfMap);
  if (geteuid() == 0) {
    REQUIRE(chown(perfMap.c_str(), 65534, 65534) == 0);
    CHECK_FALSE((*live)->perfMap());
  }
  std::remove(perfMap.c_str());

  CHECK((*live)->resume().count() > 0);
  // After resuming, only what was read while stopped can be read, and
  // read-only mappings of files (code) that cannot have changed.
  CHECK(target->readValue<uint64_t>(pageAlreadyRead) == marker);
  CHECK_FALSE(target->readValue<uint8_t>(uint64_t(&untouched[1 << 15])));
  CHECK(target->readValue<uint32_t>(uint64_t(reinterpret_cast<void *>(&pause)) + 8192) ==
        *reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(&pause) + 8192));
  REQUIRE(write(requests[1], &byte, 1) == 1); // and the child runs on
  REQUIRE(read(answers[0], &byte, 1) == 1);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_CASE("no such process, an exited one and stackwalk itself are errors with a reason") {
  auto none = LiveProcess::open(0x3fffffff);
  REQUIRE_FALSE(bool(none));
  CHECK(llvm::toString(none.takeError()) == "no process 1073741823");
  pid_t zombie = fork();
  if (zombie == 0) _exit(0);
  while (!std::ifstream("/proc/" + std::to_string(zombie) + "/status").good() ||
         [&] {
           std::ifstream status("/proc/" + std::to_string(zombie) + "/status");
           std::string text((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
           return text.find("State:\tZ") == std::string::npos;
         }())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto exited = LiveProcess::open(zombie);
  REQUIRE_FALSE(bool(exited));
  CHECK(llvm::toString(exited.takeError()) == "process " + std::to_string(zombie) + " has exited; it has no threads to walk");
  waitpid(zombie, nullptr, 0);
  auto self = LiveProcess::open(getpid());
  REQUIRE_FALSE(bool(self));
  CHECK(llvm::toString(self.takeError()) == "stackwalk cannot stop itself");
}
