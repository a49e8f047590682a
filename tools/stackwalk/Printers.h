// The two faces of a report: text for people, JSON (schema stackwalk/1) for scripts.
#pragma once

#include "Report.h"

#include <memory>
#include <ostream>

namespace stackwalk {

struct PrintOptions {
  bool registers = false;
  bool rawContext = false;
};

std::unique_ptr<ReportPrinter> makeTextPrinter(std::ostream &out, const PrintOptions &options);
std::unique_ptr<ReportPrinter> makeJsonPrinter(std::ostream &out, const PrintOptions &options);

} // namespace stackwalk
