// Colour in text output on a terminal, in the roles gdb styles: addresses
// blue, functions yellow, source files green; a crashed thread red; how a
// frame was found dim. Off unless asked for (--color, see colourWanted).
#pragma once

#include <string>
#include <string_view>

namespace stackwalk {

enum class Paint { Address, Function, File, Crashed, Warning, Dim };

class TextStyle {
public:
  explicit TextStyle(bool colour) : colour_(colour) {}

  // `text` between the role's SGR sequence and a reset, or as it is.
  std::string operator()(Paint role, std::string_view text) const {
    if (!colour_ || text.empty()) return std::string(text);
    return std::string(sgr(role)) + std::string(text) + "\x1b[0m";
  }

private:
  static std::string_view sgr(Paint role) {
    switch (role) {
    case Paint::Address: return "\x1b[34m";
    case Paint::Function: return "\x1b[33m";
    case Paint::File: return "\x1b[32m";
    case Paint::Crashed: return "\x1b[1;31m";
    case Paint::Warning: return "\x1b[35m";
    case Paint::Dim: return "\x1b[2m";
    }
    return "";
  }

  bool colour_;
};

// --color WHEN: "always", "never", or "auto": when standard output is a
// terminal, TERM is not "dumb" and NO_COLOR (no-color.org) is unset or empty.
bool colourWanted(const std::string &when);

} // namespace stackwalk
