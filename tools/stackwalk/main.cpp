// stackwalk: every thread's call stack from a crash dump.
//
// Exit codes: 0 a report was produced (warnings allowed); 2 usage error;
// 3 the dump could not be read. (1 is kept for batches where some dumps failed.)
#include "Printers.h"
#include "Report.h"

#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/elfcore/ElfCoreLoader.h"
#include "stackwalk/minidump/MinidumpLoader.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

namespace {

constexpr int ExitOk = 0, ExitUsage = 2, ExitUnreadable = 3;

llvm::Expected<std::unique_ptr<stackwalk::Target>> loadDump(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot open " + path);
  uint8_t head[64] = {};
  file.read(reinterpret_cast<char *>(head), sizeof head);
  std::span<const uint8_t> bytes(head, size_t(file.gcount()));
  if (stackwalk::looksLikeElfCore(bytes)) return stackwalk::loadElfCore(path);
  if (stackwalk::looksLikeMinidump(bytes)) return stackwalk::loadMinidump(path);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + " is not a dump stackwalk can read (an ELF core or a minidump)");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"stackwalk: every thread's call stack from a crash dump (ELF core)"};
  std::string dumpPath;
  stackwalk::ReportOptions reportOptions;
  stackwalk::PrintOptions printOptions;
  stackwalk::ModuleSearchOptions searchOptions;
  bool json = false;
  app.add_option("dump", dumpPath, "the dump file")->required();
  app.add_flag("-a,--all-threads", reportOptions.allThreads, "walk every thread");
  app.add_option("--thread", reportOptions.threadIds, "walk this thread (repeatable)");
  app.add_flag("--json", json, "print JSON (schema stackwalk/1)");
  app.add_option("--module-path", searchOptions.modulePaths,
                 "directory with module files and debug files: flat, or a .build-id tree (repeatable)");
  app.add_option("-e,--executable", searchOptions.executable,
                 "the main executable's file (its build-id is still checked)");
  app.add_option("--sysroot", searchOptions.sysroot, "prefix for the module paths the dump recorded");
  app.add_option("--max-frames", reportOptions.limits.maxFrames, "frames per thread at most")
      ->default_val(reportOptions.limits.maxFrames)
      ->check(CLI::Range(1u, 1000000u));
  app.add_flag("--registers", printOptions.registers, "print each frame's known registers");
  app.add_flag("--raw-context", printOptions.rawContext, "print each frame's Windows-layout CONTEXT");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return ExitUsage;
  }

  auto target = loadDump(dumpPath);
  if (!target) {
    std::cerr << "stackwalk: " << llvm::toString(target.takeError()) << "\n";
    return ExitUnreadable;
  }
  if ((*target)->threads.empty()) {
    // Without a thread there is no stack to report: the dump is unreadable.
    std::string why = "no thread could be read from " + dumpPath;
    for (const std::string &warning : (*target)->warnings) why += "; " + warning;
    std::cerr << "stackwalk: " << why << "\n";
    return ExitUnreadable;
  }
  stackwalk::ModuleResolver(searchOptions).resolve(**target);
  stackwalk::Report report = stackwalk::planReport(dumpPath, **target, reportOptions);
  auto printer = json ? stackwalk::makeJsonPrinter(std::cout, printOptions)
                      : stackwalk::makeTextPrinter(std::cout, printOptions);
  stackwalk::writeReport(report, reportOptions, *printer);
  return ExitOk;
}
