// Stops a child process of this test with threads parked in known places,
// and checks what a walk would be given; the child must run on afterwards.
#include "stackwalk/live/LiveProcess.h"

#include <catch2/catch.hpp>

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

} // namespace

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
