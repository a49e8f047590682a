#include "UnwindInfoPrinter.h"

#include "Format.h"

namespace stackwalk {

void printUnwindInfo(std::ostream &out, const std::string &dumpPath, const UnwindInfoReport &report) {
  out << "unwind info at " << addressString(report.address) << " " << printable(report.module->name);
  if (!report.function.empty()) {
    out << "!" << printable(report.function);
    if (report.functionOffset && *report.functionOffset) out << "+" << offsetString(*report.functionOffset);
  } else {
    out << "+" << offsetString(report.address - report.module->base);
  }
  out << " (" << printable(dumpPath) << ")\n" << report.kind << ":\n";
  for (const std::string &line : report.lines) out << "  " << printable(line) << "\n";
}

} // namespace stackwalk
