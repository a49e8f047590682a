#include "Format.h"
#include "Printers.h"

#include "stackwalk/walk/Signature.h"

namespace stackwalk {
namespace {

// `tid "name" (crashed): module!function < module!function < ...`
class SummaryPrinter : public ReportPrinter {
public:
  SummaryPrinter(std::ostream &out, const PrintOptions &options) : out_(out), options_(options) {}
  void begin(const Report &report) override { out_ << printable(report.dumpPath) << ":\n"; }
  void thread(const ReportThread &thread) override {
    out_ << "  " << thread.tid;
    if (thread.name) out_ << " \"" << printable(*thread.name) << "\"";
    if (thread.crashed) out_ << " (crashed)";
    out_ << ": " << printable(topFrames(thread, options_.signatureFrames)) << "\n";
  }
  void end(const Report &) override {}

private:
  std::ostream &out_;
  PrintOptions options_;
};

} // namespace

std::unique_ptr<ReportPrinter> makeSummaryPrinter(std::ostream &out, const PrintOptions &options) {
  return std::make_unique<SummaryPrinter>(out, options);
}

} // namespace stackwalk
