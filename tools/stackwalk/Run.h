// Running stackwalk on one dump or a batch of them (exit codes: ExitCodes.h).
#pragma once

#include "ExitCodes.h"
#include "Printers.h"
#include "WorkerPool.h"

#include "stackwalk/walk/ProcessWalk.h"

#include <optional>
#include <ostream>
#include <string>
#include <sys/types.h>
#include <vector>

namespace stackwalk {

struct RunOptions {
  enum class Format { Text, Json, Summary };
  Format format = Format::Text;
  WalkOptions walk;
  PrintOptions print;
  unsigned jobs = 0; // 0: the number of cores, asked only for a batch (a /sys read)
  std::optional<uint64_t> scanFrom; // --scan-from: list return-address candidates instead
  unsigned scanWords = 4096;        // --scan-words: stack words read at most
  bool scanEveryWord = false;       // --all-words: every word, not only the candidates
  bool runtimeInfo = false;         // --runtime-info: describe the .NET runtime instead
  std::string unwindInfo;           // --unwind-info WHERE: describe the unwind data there instead
  uint64_t maxDebugBytes = uint64_t(2) << 30; // DWARF per dump, uncompressed (DebugInfoBudget.h)
  std::string symbolCache; // decompressed debug files are kept there; empty: none kept
  std::string saveCore;    // --pid: an ELF core of what was read is written there
  // Walk in worker processes under these limits (always for a batch; for one
  // dump when --timeout or --max-memory is given). `workers` comes from `jobs`.
  std::optional<WorkerLimits> isolation;
};

// One dump's report on `out`; why it could not be read on `err`.
int reportDump(const std::string &path, const RunOptions &options, std::ostream &out, std::ostream &err);

// A running process's report (Linux): its threads are stopped while the walk
// reads them and resumed before the report is printed (LiveProcess.h).
int reportProcess(pid_t pid, const RunOptions &options, std::ostream &out, std::ostream &err);

// Each dump's report in the order given, `jobs` dumps walked at a time, each
// in a worker process (WorkerPool.h). In JSON, one document per line (NDJSON),
// and an error object for a dump that could not be read or whose walk failed.
// A progress bar goes to a terminal on stderr.
int reportBatch(const std::vector<std::string> &paths, const RunOptions &options, std::ostream &out, std::ostream &err);

} // namespace stackwalk
