// Running stackwalk on one dump or a batch of them.
//
// Exit codes: 0 a report was produced (warnings allowed); 1 in a batch, some
// dumps could not be read; 2 usage error (main); 3 the dump could not be read.
#pragma once

#include "Printers.h"

#include "stackwalk/walk/ProcessWalk.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace stackwalk {

constexpr int ExitOk = 0, ExitSomeFailed = 1, ExitUsage = 2, ExitUnreadable = 3;

struct RunOptions {
  enum class Format { Text, Json, Summary };
  Format format = Format::Text;
  WalkOptions walk;
  PrintOptions print;
  unsigned jobs = 1;
  std::optional<uint64_t> scanFrom; // --scan-from: list return-address candidates instead
  unsigned scanWords = 4096;        // --scan-words: stack words read at most
  bool scanEveryWord = false;       // --all-words: every word, not only the candidates
  bool runtimeInfo = false;         // --runtime-info: describe the .NET runtime instead
  std::string unwindInfo;           // --unwind-info WHERE: describe the unwind data there instead
  uint64_t maxDebugBytes = uint64_t(2) << 30; // DWARF per module file, uncompressed
};

// One dump's report on `out`; why it could not be read on `err`.
int reportDump(const std::string &path, const RunOptions &options, std::ostream &out, std::ostream &err);

// Each dump's report in the order given, `jobs` dumps walked at a time. In
// JSON, one document per line (NDJSON), and an error object for a dump that
// could not be read. A progress bar goes to a terminal on stderr.
int reportBatch(const std::vector<std::string> &paths, const RunOptions &options, std::ostream &out, std::ostream &err);

} // namespace stackwalk
