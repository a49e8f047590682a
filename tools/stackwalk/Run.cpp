#include "Run.h"
#include "Progress.h"
#include "RuntimeInfo.h"
#include "ScanPrinter.h"
#include "UnwindInfoPrinter.h"

#include "stackwalk/core/Fail.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
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

// Why a dump has no report, and the exit code that says so.
struct Failure {
  explicit Failure(llvm::Error error) {
    llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) {
      message = e.message();
      if (isRequestError(e)) exitCode = ExitUsage;
    });
  }
  std::string message;
  int exitCode = ExitUnreadable;
};

// Loads and walks a dump, printing its report; nullopt, or why there is none.
std::optional<Failure> walkDump(const std::string &path, const RunOptions &options, std::ostream &out,
                                WalkSession &session) {
  auto walk = ProcessWalk::open(path, options.walk, session);
  if (!walk) return Failure(walk.takeError());
  const Target &target = (*walk)->target();
  if (options.scanFrom) {
    std::vector<StackWord> words =
        scanStack(target, *options.scanFrom, options.scanWords, session.symbolizer, options.scanEveryWord);
    printStackWords(out, path, *options.scanFrom, words, options.scanEveryWord, options.format == RunOptions::Format::Json);
    return std::nullopt;
  }
  if (!options.unwindInfo.empty()) {
    auto described = unwindInfoAt(target, session, options.unwindInfo);
    if (!described) return Failure(described.takeError());
    printUnwindInfo(out, path, *described);
    return std::nullopt;
  }
  if (options.runtimeInfo) {
    printRuntimeInfo(out, path, target, options.format == RunOptions::Format::Json);
    return std::nullopt;
  }
  std::unique_ptr<ReportPrinter> printer = makePrinter(options, out);
  printer->begin((*walk)->report());
  while (auto thread = (*walk)->nextThread()) printer->thread(*thread);
  printer->end(printer->printsSignature() ? (*walk)->finish() : (*walk)->report());
  return std::nullopt;
}

} // namespace

int reportDump(const std::string &path, const RunOptions &options, std::ostream &out, std::ostream &err) {
  WalkSession session(options.maxDebugBytes);
  if (auto failure = walkDump(path, options, out, session)) {
    err << "stackwalk: " << failure->message << "\n";
    // A script reading JSON gets the error object a batch would print.
    if (options.format == RunOptions::Format::Json) printJsonError(out, path, failure->message, options.print.compact);
    return failure->exitCode;
  }
  return ExitOk;
}

int reportBatch(const std::vector<std::string> &paths, const RunOptions &options, std::ostream &out, std::ostream &err) {
  struct Result {
    std::string output;
    std::optional<Failure> failure;
    bool ready = false;
  };
  std::vector<Result> results(paths.size());
  std::mutex mutex;
  std::condition_variable readyChanged;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    // Each worker keeps its own caches: LLVM's DWARF and PDB readers are not
    // thread-safe, and dumps of one program share most module files.
    WalkSession session(options.maxDebugBytes);
    for (size_t i; (i = next++) < paths.size();) {
      std::ostringstream text;
      std::optional<Failure> failure = walkDump(paths[i], options, text, session);
      std::lock_guard lock(mutex);
      results[i].output = text.str();
      results[i].failure = std::move(failure);
      results[i].ready = true;
      readyChanged.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (unsigned j = 0; j < std::max(1u, options.jobs); ++j) workers.emplace_back(worker);

  // Print in the order given, as soon as each report is ready, and drop it.
  Progress progress(paths.size(), err, isatty(STDERR_FILENO));
  bool anyFailed = false;
  for (size_t i = 0; i < paths.size(); ++i) {
    Result result;
    {
      std::unique_lock lock(mutex);
      readyChanged.wait(lock, [&] { return results[i].ready; });
      result = std::move(results[i]);
    }
    if (result.failure) {
      anyFailed = true;
      if (options.format == RunOptions::Format::Json) printJsonError(out, paths[i], result.failure->message, true);
      else progress.message("stackwalk: " + result.failure->message);
    }
    progress.done(paths[i], result.failure.has_value());
    out << result.output << std::flush;
    if (options.format == RunOptions::Format::Text && i + 1 < paths.size() && !result.failure) out << "\n";
  }
  for (std::thread &t : workers) t.join();
  return anyFailed ? ExitSomeFailed : ExitOk;
}

} // namespace stackwalk
