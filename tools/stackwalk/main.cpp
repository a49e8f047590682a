// stackwalk: every thread's call stack from crash dumps. Exit codes in ExitCodes.h.
#include "HugePageHeap.h"
#include "Inputs.h"
#include "Run.h"
#include "TextStyle.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/PrintableText.h"
#include "stackwalk/symstore/HttpSymbolFetcher.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

// A batch's limits per dump unless given: far above what real dumps take
// (a 200-thread core takes 0.1 s and 40 MiB), far below what a hostile one could.
constexpr unsigned DefaultBatchTimeoutSeconds = 300;
constexpr uint64_t DefaultBatchMaxMemoryMiB = 4096;

// "did you mean --all-threads?" for an unknown option close to a known one.
std::string suggestion(const CLI::App &app, const std::string &unknown) {
  llvm::StringRef given = llvm::StringRef(unknown).ltrim('-');
  std::string best;
  unsigned bestDistance = 4; // more edits than this is no suggestion
  for (const CLI::Option *option : app.get_options())
    for (const std::string &name : option->get_lnames()) {
      unsigned distance = given.edit_distance(name);
      if (llvm::StringRef(name).starts_with(given) && given.size() >= 3) distance = 1;
      if (distance < bestDistance) bestDistance = distance, best = "--" + name;
    }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

// A usage error as every message is written: "stackwalk: ...", on one line.
int usageError(const CLI::App &app, const CLI::ParseError &e) {
  std::string message = e.what();
  llvm::StringRef text(message);
  if (dynamic_cast<const CLI::ExtrasError *>(&e) && text.contains("--"))
    message += suggestion(app, text.substr(text.find("--")).split(' ').first.str());
  std::cerr << "stackwalk: " << stackwalk::printable(message) << " (stackwalk --help lists the options)\n";
  return stackwalk::ExitUsage;
}

// The paths the options name exist and can be read; --from's list is read.
int checkInputs(const stackwalk::RunOptions &options, const std::string &fromFile, std::vector<std::string> &dumps,
                bool dumpsNeeded) {
  const stackwalk::ModuleSearchOptions &search = options.walk.search;
  llvm::Error problems = llvm::Error::success();
  if (!search.executable.empty())
    problems = llvm::joinErrors(std::move(problems), stackwalk::checkGivenPath("-e", search.executable, false));
  if (!search.sysroot.empty())
    problems = llvm::joinErrors(std::move(problems), stackwalk::checkGivenPath("--sysroot", search.sysroot, true));
  for (const std::string &dir : search.modulePaths)
    problems = llvm::joinErrors(std::move(problems), stackwalk::checkGivenPath("--module-path", dir, true));
  for (const std::string &dir : search.symbolPaths)
    problems = llvm::joinErrors(std::move(problems), stackwalk::checkGivenPath("--symbols-path", dir, true));
  if (!options.walk.perfMap.empty())
    problems = llvm::joinErrors(std::move(problems), stackwalk::checkGivenPath("--perf-map", options.walk.perfMap, false));
  if (!fromFile.empty()) {
    if (auto listed = stackwalk::readPathList(fromFile)) dumps.insert(dumps.end(), listed->begin(), listed->end());
    else problems = llvm::joinErrors(std::move(problems), listed.takeError());
  } else if (dumps.empty() && dumpsNeeded) {
    problems = llvm::joinErrors(std::move(problems), stackwalk::fail("no dump given (a path, or --from FILE)"));
  }
  if (!problems) return stackwalk::ExitOk;
  llvm::handleAllErrors(std::move(problems), [](const llvm::ErrorInfoBase &error) {
    std::cerr << "stackwalk: " << stackwalk::printable(error.message()) << "\n";
  });
  return stackwalk::ExitUsage;
}

// Each process in turn, in this process: ptrace's stops belong to the thread
// that made them, and a process is not input that a worker must be kept from.
int reportProcesses(const std::vector<pid_t> &pids, const stackwalk::RunOptions &options) {
  int exitCode = stackwalk::ExitOk;
  for (size_t i = 0; i < pids.size(); ++i) {
    if (i > 0 && options.format == stackwalk::RunOptions::Format::Text) std::cout << "\n";
    int code = stackwalk::reportProcess(pids[i], options, std::cout, std::cerr);
    if (code != stackwalk::ExitOk) exitCode = pids.size() > 1 ? stackwalk::ExitSomeFailed : code;
    std::cout << std::flush;
  }
  return exitCode;
}

} // namespace

int main(int argc, char **argv) {
  stackwalk::backHeapWithHugePages();
  using stackwalk::RunOptions;
  CLI::App app{"stackwalk: every thread's call stack from crash dumps (ELF cores, minidumps)"};
  std::vector<std::string> dumpPaths;
  RunOptions options;
  bool json = false, ndjson = false, summary = false;
  std::string fromFile;
  app.set_version_flag("--version", "stackwalk " STACKWALK_VERSION " (" STACKWALK_GIT_ID ", LLVM " LLVM_VERSION_STRING ")");
  app.add_option("dumps", dumpPaths, "dump files (several: a batch, printed in the order given)");
  app.add_option("--from", fromFile, "read dump paths from FILE, one per line (- for standard input)");
  std::vector<pid_t> pids;
  auto *optPid = app.add_option("-p,--pid", pids,
                                "walk this running process instead of a dump, its threads stopped while they are read "
                                "(Linux; repeatable: one report each, in turn)")
                     ->allow_extra_args(false);
  auto *optSaveCore = app.add_option("--save-core", options.saveCore,
                                     "with one --pid: also write what was read as an ELF core FILE (its threads, the "
                                     "pages read while stopped and its whole stacks; gdb and stackwalk read it)")
                          ->needs(optPid);
  app.add_flag("-a,--all-threads", options.walk.allThreads, "walk every thread");
  app.add_option("--thread", options.walk.threadIds, "walk this thread (repeatable)")->allow_extra_args(false);
  app.add_flag("--json", json, "print JSON (schema stackwalk/1); several dumps: one document per line");
  app.add_flag("--ndjson", ndjson, "print JSON as one line per dump even for a single dump");
  app.add_flag("--summary", summary, "one line per thread: tid, name, top frames (all threads unless --thread)");
  app.add_option("-j,--jobs", options.jobs, "dumps walked in parallel (default: the number of cores)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--module-path", options.walk.search.modulePaths,
                 "directory with module, debug and PDB files: flat, .build-id tree or symbol store (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--symbols-path", options.walk.search.symbolPaths,
                 "Breakpad symbol store: DIR/<debug file>/<debug id>/<debug file>.sym (repeatable)")
      ->allow_extra_args(false);
  stackwalk::SymbolServers servers;
  std::vector<std::string> debuginfodLists;
  unsigned symbolTimeout = servers.timeoutSeconds;
  app.add_option("--symbol-server", servers.stores,
                 "symbol server URL: Microsoft or SSQP store (name/KEY/name) or Breakpad .sym store (repeatable)")
      ->allow_extra_args(false);
  auto *optDebuginfod = app.add_option("--debuginfod", debuginfodLists,
                                       "debuginfod server URLs, space-separated (repeatable; default: $DEBUGINFOD_URLS, "
                                       "as gdb and eu-stack read it; --debuginfod '' for none)")
                           ->allow_extra_args(false);
  app.add_option("--symbol-cache", servers.cacheDir,
                 "where files from symbol servers and decompressed debug files are kept (with servers, default: "
                 "$XDG_CACHE_HOME/stackwalk/symbols)");
  app.add_option("--symbol-timeout", symbolTimeout, "seconds a symbol server has for one file (default 30)")
      ->check(CLI::Range(1u, 3600u));
  app.add_option("-e,--executable", options.walk.search.executable,
                 "the main executable's file (its identity is still checked)");
  app.add_option("--sysroot", options.walk.search.sysroot, "prefix for the module paths the dump recorded");
  app.add_flag("--trust-unchecked-files", options.walk.trustUncheckedFiles,
               "let files whose identity the dump does not record name frames in crash signatures too");
  app.add_option("--perf-map", options.walk.perfMap,
                 "a perf map naming JIT code outside every module (never chosen by the dump's pid)");
  app.add_option("--max-frames", options.walk.limits.maxFrames, "frames per thread at most")
      ->default_val(options.walk.limits.maxFrames)
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--max-debug-bytes", options.maxDebugBytes,
                 "DWARF read per dump, across its modules, uncompressed (default 2 GiB)")
      ->default_val(options.maxDebugBytes);
  app.add_option("--max-threads", options.walk.maxThreads, "threads walked at most")
      ->default_val(options.walk.maxThreads)
      ->check(CLI::Range(size_t(1), size_t(10000000)));
  app.add_option("--max-total-frames", options.walk.maxTotalFrames,
                 "frames of all threads of a dump together at most; later threads are not walked")
      ->default_val(options.walk.maxTotalFrames)
      ->check(CLI::Range(size_t(1), size_t(1) << 40));
  app.add_option("--signature-frames", options.print.signatureFrames, "frames in a signature or summary line")
      ->default_val(options.print.signatureFrames)
      ->check(CLI::Range(1u, 100u));
  bool noHostFiles = false, untrusted = false;
  app.add_flag("--no-host-files", noHostFiles,
               "look up the paths a dump records only under --sysroot (and files in --module-path), never on "
               "this machine, and no debug file under /usr/lib/debug");
  app.add_flag("--untrusted", untrusted,
               "dumps from anyone: --no-host-files, and even a single dump walked in a worker process under "
               "the batch limits (--timeout, --max-memory)");
  unsigned timeoutSeconds = 0;
  uint64_t maxMemoryMiB = 0;
  auto *optTimeout = app.add_option("--timeout", timeoutSeconds,
                                    "stop a dump's walk after SECONDS and report it as timed out (0: never; "
                                    "default in a batch: 300)");
  auto *optMaxMemory = app.add_option("--max-memory", maxMemoryMiB,
                                      "stop a dump's walk when it uses more than MiB of memory (0: no limit; "
                                      "default in a batch: 4096)");
  uint64_t startSp = 0, startIp = 0, startFp = 0, scanFrom = 0;
  auto *optStartSp = app.add_option("--start-sp", startSp, "start the walk at this stack pointer (with --start-ip)");
  auto *optStartIp = app.add_option("--start-ip", startIp, "... and this return address; the first frame is `manual`");
  auto *optStartFp = app.add_option("--start-fp", startFp, "... and this frame pointer (optional)");
  auto *optScanFrom = app.add_option("--scan-from", scanFrom,
                                     "list the return-address candidates on the stack from this address");
  auto *optUnwindInfo = app.add_option("--unwind-info", options.unwindInfo,
                                       "print the unwind data that governs ADDR, module+0xOFFSET or module!function "
                                       "(WinDbg's .fnent; DWARF: the FDE, its CIE and the rules in force)");
  optUnwindInfo->excludes(optScanFrom)->excludes(optStartSp);
  app.add_option("--scan-words", options.scanWords, "stack words --scan-from reads at most")
      ->default_val(options.scanWords)
      ->check(CLI::Range(1u, 1u << 20))
      ->needs(optScanFrom);
  app.add_flag("--all-words", options.scanEveryWord,
               "--scan-from lists every stack word with what it points into (WinDbg's dps), candidates marked")
      ->needs(optScanFrom);
  optStartSp->needs(optStartIp);
  optStartIp->needs(optStartSp);
  optStartFp->needs(optStartSp);
  optScanFrom->excludes(optStartSp);
  app.add_flag("--registers", options.print.registers, "print each frame's known registers");
  app.add_flag("-v,--verbose", options.print.verbose,
               "text: each frame's stack pointer (and MethodDesc), under a header naming the columns");
  std::string colour = "auto";
  app.add_option("--color", colour, "text in colour: auto (on a terminal, unless NO_COLOR is set), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--managed-only", options.walk.managedOnly,
               "only managed frames and the .NET runtime's Frames (the runtime's own walk, as SOS clrstack)");
  app.add_flag("--runtime-info", options.runtimeInfo,
               "describe the .NET runtime found in the dump (contract descriptor, contracts, threads) instead of walking");
  app.add_flag("--raw-context", options.print.rawContext, "print each frame's Windows-layout CONTEXT");
  app.add_flag("--args", options.walk.arguments,
               "print each function's arguments from its debug info, as gdb's backtrace does");
  try {
    app.parse(argc, argv);
    if (summary && (json || ndjson)) throw CLI::ValidationError("--summary", "cannot be combined with --json");
    if (*optUnwindInfo && (json || ndjson || summary))
      throw CLI::ValidationError("--unwind-info", "prints text: it cannot be combined with --json or --summary");
    if (*optSaveCore && pids.size() != 1)
      throw CLI::ValidationError("--save-core", "writes the core of one process: give one --pid");
    if (*optPid && (!dumpPaths.empty() || !fromFile.empty()))
      throw CLI::ValidationError("--pid", "walks running processes: give no dump with it");
    if (*optPid && (*optScanFrom || *optUnwindInfo || options.runtimeInfo || *optTimeout || *optMaxMemory || untrusted))
      throw CLI::ValidationError("--pid", "cannot be combined with --scan-from, --unwind-info, --runtime-info, "
                                          "--timeout, --max-memory or --untrusted");
    if (*optStartSp && (options.walk.allThreads || options.walk.threadIds.size() > 1 || summary))
      throw CLI::ValidationError("--start-sp", "walks one thread: give at most one --thread");
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return usageError(app, e);
  }
  if (int code = checkInputs(options, fromFile, dumpPaths, pids.empty()); code != stackwalk::ExitOk) return code;
  options.format = summary ? RunOptions::Format::Summary
                   : json || ndjson ? RunOptions::Format::Json
                                    : RunOptions::Format::Text;
  if (summary && options.walk.threadIds.empty()) options.walk.allThreads = true;
  if (*optStartSp)
    options.walk.start = stackwalk::ManualStart{startSp, startIp, *optStartFp ? std::optional(startFp) : std::nullopt};
  if (*optScanFrom) options.scanFrom = scanFrom;
  options.walk.signatureFrames = options.print.signatureFrames;
  options.print.compact = ndjson || dumpPaths.size() > 1 || pids.size() > 1;
  options.print.colour = options.format == RunOptions::Format::Text && stackwalk::colourWanted(colour);
  std::ios::sync_with_stdio(false);
  if (dumpPaths.empty() && pids.empty()) return stackwalk::ExitOk; // --from an empty list: nothing to do
  options.walk.search.hostFiles = !(noHostFiles || untrusted);
  std::unique_ptr<stackwalk::HttpSymbolFetcher> fetcher;
  // The user's own debuginfod configuration, as elfutils' and gdb's clients take it.
  if (!*optDebuginfod)
    if (const char *fromEnvironment = std::getenv("DEBUGINFOD_URLS")) debuginfodLists.push_back(fromEnvironment);
  for (const std::string &list : debuginfodLists)
    for (llvm::StringRef url : llvm::split(llvm::StringRef(list), ' '))
      if (!url.empty()) servers.debuginfod.push_back(url.str());
  if (!servers.stores.empty() || !servers.debuginfod.empty()) {
    if (servers.cacheDir.empty()) servers.cacheDir = stackwalk::defaultSymbolCache();
    servers.timeoutSeconds = symbolTimeout;
    fetcher = std::make_unique<stackwalk::HttpSymbolFetcher>(servers);
    options.walk.search.fetcher = fetcher.get();
  }
  options.symbolCache = servers.cacheDir;
  if (dumpPaths.size() > 1 || *optTimeout || *optMaxMemory || untrusted)
    options.isolation = stackwalk::WorkerLimits{
        .timeout = std::chrono::seconds(*optTimeout ? timeoutSeconds : DefaultBatchTimeoutSeconds),
        .maxMemoryMiB = *optMaxMemory ? maxMemoryMiB : DefaultBatchMaxMemoryMiB};
  if (!pids.empty()) return reportProcesses(pids, options);
  if (dumpPaths.size() == 1) return stackwalk::reportDump(dumpPaths.front(), options, std::cout, std::cerr);
  return stackwalk::reportBatch(dumpPaths, options, std::cout, std::cerr);
}
