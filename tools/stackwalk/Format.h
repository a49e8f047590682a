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

} // namespace stackwalk
