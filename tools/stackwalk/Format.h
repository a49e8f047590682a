// Small formatting helpers shared by the printers.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace stackwalk {

// An address as the output contract writes it: "0x" and 16 hex digits.
inline std::string addressString(uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(v));
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

// Text from a dump (names, paths, arguments) with control characters shown as
// \xNN, so a hostile dump cannot drive the terminal.
inline std::string printable(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c >= 0x20 && c != 0x7f) {
      out.push_back(char(c));
      continue;
    }
    char escape[8];
    std::snprintf(escape, sizeof escape, "\\x%02x", c);
    out += escape;
  }
  return out;
}

} // namespace stackwalk
