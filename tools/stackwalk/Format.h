// Small formatting helpers shared by the printers; printable() escapes dump text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "stackwalk/core/PrintableText.h"

namespace stackwalk {

// How a document other than the report prints (--scan-from, --runtime-info):
// as text, or as JSON, pretty or on one line as an NDJSON batch has it.
enum class JsonForm { None, Pretty, Compact };

// The indent nlohmann's dump() takes for a JSON form.
inline int jsonIndent(JsonForm form) { return form == JsonForm::Compact ? -1 : 1; }

// An address as the output contract writes it: "0x" and 16 hex digits (the
// text output gives a 32-bit process's addresses 8, as gdb and WinDbg do).
inline std::string addressString(uint64_t v, int digits = 16) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buffer;
}

// An offset: "0x" and as many hex digits as needed.
inline std::string offsetString(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

// A .NET HResult as Windows writes it: "0x" and 8 hex digits.
inline std::string hresultString(int32_t v) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%08x", static_cast<uint32_t>(v));
  return buffer;
}

} // namespace stackwalk
