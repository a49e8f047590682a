#include "WorkerPool.h"
#include "WorkerChannel.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace stackwalk {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int PollMilliseconds = 50; // how often limits are checked

// What the worker's new_handler needs: it may not allocate.
int workerSocket = -1;
uint64_t workerDump = 0;

[[noreturn]] void outOfMemoryInWorker() {
  sendOutOfMemory(workerSocket, workerDump);
  _exit(1);
}

[[noreturn]] void workerMain(int socket, const WalkInWorker &walk) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the supervisor
  workerSocket = socket;
  std::set_new_handler(outOfMemoryInWorker);
  // LLVM's own allocations (safe_malloc, decompression buffers) report failure here, not through new.
  llvm::install_bad_alloc_error_handler([](void *, const char *, bool) { outOfMemoryInWorker(); });
  while (std::optional<uint64_t> dump = receiveDumpIndex(socket)) {
    workerDump = *dump;
    std::optional<DumpFailure> failure;
    {
      ChunkStream out(socket, *dump);
      failure = walk(*dump, out);
    }
    sendOutcome(socket, *dump, failure);
  }
  _exit(0);
}

// The worker's anonymous resident memory (heap, not mapped files) in MiB;
// 0 when it cannot be read. statm's resident pages less its shared ones (file
// and shmem pages) are status's RssAnon, in a file the kernel writes in a
// fraction of the time: read after every dump, status was 3% of a batch's CPU.
uint64_t anonymousResidentMiB(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0, shared = 0;
  if (!(statm >> size >> resident >> shared) || shared > resident) return 0;
  return (resident - shared) * uint64_t(sysconf(_SC_PAGESIZE)) >> 20;
}

struct Worker {
  pid_t pid = -1;
  int socket = -1;
  MessageReader reader;
  std::optional<size_t> dump; // being walked
  Clock::time_point started;
  std::optional<DumpFailure::Kind> stoppedFor; // when the supervisor killed it: Timeout or OutOfMemory
  bool gone = false;                            // exited and reaped
};

class Supervisor {
public:
  Supervisor(size_t dumps, const WorkerLimits &limits, const WalkInWorker &walk, const DeliverOutcome &deliver)
      : dumps_(dumps), limits_(limits), walk_(walk), deliver_(deliver) {}

  void run() {
    while (nextToDeliver_ < dumps_) {
      startWorkers();
      for (auto &worker : workers_)
        if (!worker->dump && nextToAssign_ < dumps_) assign(*worker);
      waitForMessages();
      for (auto &worker : workers_)
        if (worker->dump) enforceLimits(*worker);
      std::erase_if(workers_, [](const std::unique_ptr<Worker> &w) { return w->gone; });
      deliverReady();
    }
    for (auto &worker : workers_) retire(*worker);
  }

private:
  struct Pending {
    ReportSpool report;
    bool done = false;
    std::optional<DumpFailure> failure;
  };

  void startWorkers() {
    while (workers_.size() < limits_.workers && workers_.size() < dumps_ - nextToAssign_ + busyWorkers()) {
      if (spawn()) continue;
      // No worker can be started: the next dump fails, so the batch still ends.
      if (workers_.empty() && nextToAssign_ < dumps_)
        finish(nextToAssign_++, failure(DumpFailure::Kind::Crashed, "no worker process could be started: " +
                                                                        std::string(std::strerror(errno))));
      return;
    }
  }

  size_t busyWorkers() const {
    return size_t(std::count_if(workers_.begin(), workers_.end(), [](auto &w) { return w->dump.has_value(); }));
  }

  bool spawn() {
    int sockets[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return false;
    pid_t pid = fork();
    if (pid < 0) {
      close(sockets[0]), close(sockets[1]);
      return false;
    }
    if (pid == 0) {
      close(sockets[0]);
      for (auto &other : workers_) close(other->socket); // so each worker sees its own end of input
      workerMain(sockets[1], walk_);
    }
    close(sockets[1]);
    auto worker = std::make_unique<Worker>();
    worker->pid = pid;
    worker->socket = sockets[0];
    workers_.push_back(std::move(worker));
    return true;
  }

  void assign(Worker &worker) {
    size_t dump = nextToAssign_++;
    worker.dump = dump;
    worker.started = Clock::now();
    pending_[dump] = Pending{};
    if (!sendDumpIndex(worker.socket, dump)) reap(worker); // it died idle: the dump goes with it
  }

  void waitForMessages() {
    std::vector<pollfd> fds;
    for (auto &worker : workers_) fds.push_back({worker->socket, POLLIN, 0});
    if (poll(fds.data(), fds.size(), PollMilliseconds) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents) receive(*workers_[i]);
  }

  void receive(Worker &worker) {
    if (!worker.reader.readFrom(worker.socket)) return reap(worker);
    while (std::optional<WorkerMessage> message = worker.reader.next()) {
      Pending &pending = pending_[message->dump];
      if (message->type == WorkerMessage::Type::Chunk) {
        pending.report.append(message->payload);
        continue;
      }
      finish(message->dump, decodeOutcome(message->payload));
      worker.dump.reset();
      // A worker whose caches grew to half the limit between dumps starts afresh,
      // so the limit applies to a dump, not to what the dumps before it left.
      if (limits_.maxMemoryMiB && anonymousResidentMiB(worker.pid) > limits_.maxMemoryMiB / 2) retire(worker);
    }
  }

  void enforceLimits(Worker &worker) {
    if (worker.stoppedFor) return;
    if (limits_.timeout.count() && Clock::now() - worker.started > limits_.timeout)
      worker.stoppedFor = DumpFailure::Kind::Timeout;
    else if (limits_.maxMemoryMiB && anonymousResidentMiB(worker.pid) > limits_.maxMemoryMiB)
      worker.stoppedFor = DumpFailure::Kind::OutOfMemory;
    if (worker.stoppedFor) kill(worker.pid, SIGKILL);
  }

  // The worker is gone (or going): reaped, and the dump it was walking fails.
  void reap(Worker &worker) {
    int status = 0;
    close(worker.socket);
    waitpid(worker.pid, &status, 0);
    worker.gone = true;
    if (!worker.dump) return;
    if (worker.stoppedFor == DumpFailure::Kind::Timeout)
      finish(*worker.dump, failure(DumpFailure::Kind::Timeout, "the walk took longer than " +
                                                                   std::to_string(limits_.timeout.count()) +
                                                                   " s (--timeout) and was stopped"));
    else if (worker.stoppedFor == DumpFailure::Kind::OutOfMemory)
      finish(*worker.dump, failure(DumpFailure::Kind::OutOfMemory,
                                   "the walk used more than " + std::to_string(limits_.maxMemoryMiB) +
                                       " MiB of memory (--max-memory) and was stopped"));
    else finish(*worker.dump, crashed(status));
  }

  void retire(Worker &worker) {
    shutdown(worker.socket, SHUT_WR); // no more dumps: the worker exits
    reap(worker);
  }

  static DumpFailure failure(DumpFailure::Kind kind, std::string message) {
    DumpFailure failure;
    failure.kind = kind;
    failure.message = std::move(message);
    return failure;
  }

  static DumpFailure crashed(int status) {
    if (!WIFSIGNALED(status))
      return failure(DumpFailure::Kind::Crashed,
                     "the walk ended with exit status " + std::to_string(WEXITSTATUS(status)) + " before its report");
    DumpFailure result = failure(DumpFailure::Kind::Crashed, "the walk crashed with signal " +
                                                                 std::to_string(WTERMSIG(status)) + " (" +
                                                                 strsignal(WTERMSIG(status)) + ")");
    result.signal = WTERMSIG(status);
    return result;
  }

  // A failure the worker sent stands; a report half-sent by a worker that died is dropped.
  void finish(size_t dump, std::optional<DumpFailure> outcome) {
    Pending &pending = pending_[dump];
    if (pending.done) return;
    if (outcome) pending.report = ReportSpool();
    pending.done = true;
    pending.failure = std::move(outcome);
  }

  void deliverReady() {
    for (auto it = pending_.find(nextToDeliver_); it != pending_.end() && it->second.done;
         it = pending_.find(++nextToDeliver_)) {
      deliver_(nextToDeliver_, it->second.report, it->second.failure);
      pending_.erase(it);
    }
  }

  size_t dumps_;
  WorkerLimits limits_;
  const WalkInWorker &walk_;
  const DeliverOutcome &deliver_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::map<size_t, Pending> pending_;
  size_t nextToAssign_ = 0, nextToDeliver_ = 0;
};

} // namespace

void runInWorkers(size_t dumps, const WorkerLimits &limits, const WalkInWorker &walk, const DeliverOutcome &deliver) {
  Supervisor(dumps, limits, walk, deliver).run();
}

} // namespace stackwalk
