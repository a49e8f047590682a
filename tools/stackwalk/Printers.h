// The two faces of a report: text for people, JSON (schema stackwalk/1) for scripts.
#pragma once

#include "DumpFailure.h"

#include "stackwalk/walk/Report.h"

#include <memory>
#include <ostream>

namespace stackwalk {

struct PrintOptions {
  bool registers = false;
  bool rawContext = false;
  bool compact = false;       // JSON on one line (NDJSON batches)
  bool verbose = false;       // text: each frame's stack pointer and MethodDesc, under a column header
  bool colour = false;        // text: SGR colours (TextStyle.h)
  size_t signatureFrames = 5; // frames in a signature or a summary line
};

// Prints a report as it is walked: the header, each thread, then what is
// known only at the end.
class ReportPrinter {
public:
  virtual ~ReportPrinter() = default;
  virtual void begin(const Report &report) = 0;
  virtual void thread(const ReportThread &thread) = 0;
  virtual void end(const Report &report) = 0;
  // Whether end() prints the crash's signature, which may take a walk of its own.
  virtual bool printsSignature() const { return false; }
};

std::unique_ptr<ReportPrinter> makeTextPrinter(std::ostream &out, const PrintOptions &options);
std::unique_ptr<ReportPrinter> makeJsonPrinter(std::ostream &out, const PrintOptions &options);
// One line per thread: tid, name, and its top frames.
std::unique_ptr<ReportPrinter> makeSummaryPrinter(std::ostream &out, const PrintOptions &options);

// The JSON that stands for a dump without a report: {"kind", "message", "signal"}.
void printJsonError(std::ostream &out, const std::string &dumpPath, const DumpFailure &failure, bool compact);

} // namespace stackwalk
