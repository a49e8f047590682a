// One entry of what is known at a code address: a function, where in the
// source, and whether it is an inlined call inside the next entry's function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stackwalk {

struct SourceFrame {
  std::string function;                 // demangled; empty when unknown
  std::optional<uint64_t> functionStart; // the image's file address (physical frame only)
  std::string file;
  std::optional<uint32_t> line;
  bool inlined = false; // an inlined call inside the next entry's function
};

} // namespace stackwalk
