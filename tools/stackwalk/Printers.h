// The two faces of a report: text for people, JSON (schema stackwalk/1) for scripts.
#pragma once

#include "Report.h"

#include <ostream>

namespace stackwalk {

struct PrintOptions {
  bool registers = false;
  bool rawContext = false;
};

void printText(std::ostream &out, const Report &report, const PrintOptions &options);
void printJson(std::ostream &out, const Report &report, const PrintOptions &options);

} // namespace stackwalk
