#include "Run.h"
#include "LeftToExit.h"
#include "Progress.h"
#include "RuntimeInfo.h"
#include "ScanPrinter.h"
#include "UnwindInfoPrinter.h"
#include "WorkerPool.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/PrintableText.h"
#include "stackwalk/live/LiveProcess.h"

#include <csignal>
#include <cstdlib>
#include <optional>
#include <thread>
#include <unistd.h>

namespace stackwalk {
namespace {

std::unique_ptr<ReportPrinter> makePrinter(const RunOptions &options, std::ostream &out) {
  switch (options.format) {
  case RunOptions::Format::Json: return makeJsonPrinter(out, options.print);
  case RunOptions::Format::Summary: return makeSummaryPrinter(out, options.print);
  case RunOptions::Format::Text: break;
  }
  return makeTextPrinter(out, options.print);
}

// How --scan-from and --runtime-info print: as text, or as the report's JSON
// would (one line in an NDJSON batch).
JsonForm jsonForm(const RunOptions &options) {
  if (options.format != RunOptions::Format::Json) return JsonForm::None;
  return options.print.compact ? JsonForm::Compact : JsonForm::Pretty;
}

// Prints an opened dump's report (or what --scan-from, --unwind-info or
// --runtime-info ask for instead); nullopt, or why there is none.
std::optional<DumpFailure> printWalk(ProcessWalk &walk, const std::string &path, const RunOptions &options,
                                     std::ostream &out, WalkSession &session) {
  const Target &target = walk.target();
  if (options.scanFrom) {
    std::vector<StackWord> words =
        scanStack(target, *options.scanFrom, options.scanWords, session.symbolizer, options.scanEveryWord);
    printStackWords(out, path, *options.scanFrom, pointerSize(target.arch()), words, options.scanEveryWord,
                    jsonForm(options));
    return std::nullopt;
  }
  if (!options.unwindInfo.empty()) {
    auto described = unwindInfoAt(target, session, options.unwindInfo);
    if (!described) return DumpFailure::fromError(described.takeError());
    printUnwindInfo(out, path, *described);
    return std::nullopt;
  }
  if (options.runtimeInfo) {
    printRuntimeInfo(out, path, walk.runtimeDetails(), jsonForm(options));
    return std::nullopt;
  }
  std::unique_ptr<ReportPrinter> printer = makePrinter(options, out);
  printer->begin(walk.report());
  while (auto thread = walk.nextThread()) printer->thread(*thread);
  printer->end(printer->printsSignature() ? walk.finish() : walk.report());
  return std::nullopt;
}

enum class Teardown { AfterReport, AtProcessExit };

// Loads and walks a dump, printing its report; nullopt, or why there is none.
std::optional<DumpFailure> walkDump(const std::string &path, const RunOptions &options, std::ostream &out,
                                    WalkSession &session, Teardown teardown) {
  auto walk = ProcessWalk::open(path, options.walk, session);
  if (!walk) return DumpFailure::fromError(walk.takeError());
  std::optional<DumpFailure> failure = printWalk(**walk, path, options, out, session);
  if (teardown == Teardown::AtProcessExit) leaveToProcessExit(std::move(*walk));
  return failure;
}

// Allocates and touches memory until it runs out. The writes are volatile: an optimizer may drop a
// leaked block whose contents are never read, and then the loop (clang's did).
[[noreturn]] void exhaustMemory() {
  constexpr size_t BlockBytes = 64 << 20, PageBytes = 4096;
  for (;;) {
    volatile char *block = new char[BlockBytes]; // leaked on purpose
    for (size_t offset = 0; offset < BlockBytes; offset += PageBytes) block[offset] = 1;
  }
}

// A test's way to make a worker die as real input once did: STACKWALK_TEST_FAULT
// is a comma-separated list of crash|hang|oom:SUBSTRING, each applied to dumps
// whose path contains SUBSTRING; a batch must survive them. With --pid it is
// applied to the name "pid N" while the process's threads are stopped: stackwalk
// killed there must leave them running. Nothing else reads this variable.
void injectTestFault(const std::string &path) {
  const char *spec = std::getenv("STACKWALK_TEST_FAULT");
  llvm::SmallVector<llvm::StringRef> faults;
  llvm::StringRef(spec ? spec : "").split(faults, ',', -1, false);
  for (llvm::StringRef fault : faults) {
    auto [kind, marker] = fault.split(':');
    if (marker.empty() || !llvm::StringRef(path).contains(marker)) continue;
    if (kind == "crash") raise(SIGSEGV);
    if (kind == "hang") pause();
    if (kind == "oom") exhaustMemory();
  }
}

// A failure the supervisor made names the dump (the walk's own name it already).
DumpFailure namingDump(const DumpFailure &failure, const std::string &path) {
  DumpFailure named = failure;
  if (failure.kind == DumpFailure::Kind::Crashed || failure.kind == DumpFailure::Kind::Timeout ||
      failure.kind == DumpFailure::Kind::OutOfMemory)
    named.message = path + ": " + failure.message;
  return named;
}

// What a worker keeps across its dumps (WalkSession.h).
std::unique_ptr<WalkSession> newSession(const RunOptions &options) {
  return std::make_unique<WalkSession>(options.maxDebugBytes, options.symbolCache, options.walk.arguments);
}

} // namespace

int reportDump(const std::string &path, const RunOptions &options, std::ostream &out, std::ostream &err) {
  if (options.isolation) return reportBatch({path}, options, out, err);
  std::unique_ptr<WalkSession> session = newSession(options);
  std::optional<DumpFailure> failure = walkDump(path, options, out, *session, Teardown::AtProcessExit);
  leaveToProcessExit(std::move(session));
  if (!failure) return ExitOk;
  err << "stackwalk: " << printable(failure->message) << "\n";
  // A script reading JSON gets the error object a batch would print.
  if (options.format == RunOptions::Format::Json) printJsonError(out, path, *failure, options.print.compact);
  return failure->exitCode();
}

int reportProcess(pid_t pid, const RunOptions &options, std::ostream &out, std::ostream &err) {
  std::string name = "pid " + std::to_string(pid);
  auto unreadable = [&](llvm::Error error) {
    DumpFailure failure = DumpFailure::fromError(std::move(error));
    err << "stackwalk: " << printable(failure.message) << "\n";
    if (options.format == RunOptions::Format::Json) printJsonError(out, name, failure, options.print.compact);
    return failure.exitCode();
  };
  auto live = LiveProcess::open(pid);
  if (!live) return unreadable(live.takeError());
  std::unique_ptr<Target> target = (*live)->takeTarget();
  Target &process = *target; // owned by the walk from here on; the pause is written into it below
  std::unique_ptr<WalkSession> session = newSession(options);
  // Module files, registrations and the runtime are found while the process
  // runs; its threads are stopped only while their stacks and what the
  // runtime keeps of them are copied, and are unwound and named as they run
  // on. For --args, whose values may lie anywhere in memory, for
  // --save-core, and when a thread is not on its own stack (an alternate
  // signal stack's handler), the unwinding happens while they are stopped.
  WalkOptions walkOptions = options.walk;
  if (walkOptions.perfMap.empty()) walkOptions.perfMap = (*live)->perfMap().value_or("");
  std::unique_ptr<ProcessWalk> walk = ProcessWalk::openWithoutThreads(std::move(target), name, walkOptions, *session);
  auto stopped = (*live)->stop(/*forCore=*/!options.saveCore.empty(), /*fpState=*/options.print.registers);
  if (!stopped) return unreadable(stopped.takeError());
  injectTestFault(name);
  if (llvm::Error error = walk->adoptThreads(std::move(stopped->threads), stopped->warnings)) {
    (*live)->resume();
    return unreadable(std::move(error));
  }
  bool unwindStopped = options.walk.arguments || !options.saveCore.empty() || !(*live)->threadsOnTheirOwnStacks();
  if (unwindStopped) {
    walk->unwindAll();
  } else {
    walk->beginAll();
    (*live)->keepStacks();
  }
  auto after = unwindStopped ? LiveProcess::AfterResume::OnlyFiles : LiveProcess::AfterResume::AllButStacks;
  process.process.pauseMicroseconds = uint64_t((*live)->resume(after).count());
  walk->unwindAll();
  int exitCode = ExitOk;
  if (!options.saveCore.empty())
    if (llvm::Error error = (*live)->saveCore(options.saveCore)) {
      err << "stackwalk: --save-core: " << printable(llvm::toString(std::move(error))) << "\n";
      exitCode = ExitUnreadable;
    }
  std::unique_ptr<ReportPrinter> printer = makePrinter(options, out);
  printer->begin(walk->report());
  while (auto thread = walk->nextThread()) printer->thread(*thread);
  printer->end(printer->printsSignature() ? walk->finish() : walk->report());
  return exitCode;
}

int reportBatch(const std::vector<std::string> &paths, const RunOptions &options, std::ostream &out, std::ostream &err) {
  WorkerLimits limits = options.isolation.value_or(WorkerLimits{});
  limits.workers = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<WalkSession> session; // made in each worker, kept across its dumps
  WalkInWorker walk = [&](size_t index, std::ostream &report) {
    if (!session) session = newSession(options);
    injectTestFault(paths[index]);
    return walkDump(paths[index], options, report, *session, Teardown::AfterReport);
  };
  out << std::flush; // nothing buffered is copied into the workers

  Progress progress(paths.size(), err, isatty(STDERR_FILENO));
  int exitCode = ExitOk;
  DeliverOutcome deliver = [&](size_t i, ReportSpool &report, const std::optional<DumpFailure> &failure) {
    if (failure) {
      DumpFailure named = namingDump(*failure, paths[i]);
      exitCode = paths.size() > 1 ? ExitSomeFailed : named.exitCode();
      if (options.format == RunOptions::Format::Json) printJsonError(out, paths[i], named, options.print.compact);
      progress.message("stackwalk: " + printable(named.message));
    }
    progress.done(paths[i], failure.has_value());
    report.writeTo(out);
    out << std::flush;
    if (options.format == RunOptions::Format::Text && i + 1 < paths.size() && !failure) out << "\n";
  };
  runInWorkers(paths.size(), limits, walk, deliver);
  return exitCode;
}

} // namespace stackwalk
