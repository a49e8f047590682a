#include "Format.h"
#include "Printers.h"

#include "stackwalk/walk/Signature.h"

namespace stackwalk {
namespace {

// `tid "name" (crashed): module!function < module!function < ...`
class SummaryPrinter : public ReportPrinter {
public:
  SummaryPrinter(std::ostream &out, const PrintOptions &options) : out_(out), options_(options) {}
  void begin(const Report &report) override {
    out_ << printable(report.dumpPath) << ":\n";
    warningsBefore_ = report.warnings.size();
  }
  void thread(const ReportThread &thread) override {
    out_ << "  " << thread.tid;
    if (thread.name) out_ << " \"" << printable(*thread.name) << "\"";
    if (thread.crashed) out_ << " (crashed)";
    out_ << ": " << printable(topFrames(thread, options_.signatureFrames)) << "\n";
  }
  // Only what the walk itself warned of (a budget spent: threads left out) is said here; what the
  // dump's reading warned of belongs to the full report.
  void end(const Report &report) override {
    for (size_t i = warningsBefore_; i < report.warnings.size(); ++i)
      out_ << "  warning: " << printable(report.warnings[i]) << "\n";
  }

private:
  std::ostream &out_;
  PrintOptions options_;
  size_t warningsBefore_ = 0;
};

} // namespace

std::unique_ptr<ReportPrinter> makeSummaryPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<SummaryPrinter>(out, options);
}

} // namespace stackwalk
