#include "TextStyle.h"

#include <cstdlib>
#include <unistd.h>

namespace stackwalk {

bool colourWanted(const std::string &when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char *noColour = std::getenv("NO_COLOR");
  const char *term = std::getenv("TERM");
  if (noColour && *noColour) return false;
  if (term && std::string_view(term) == "dumb") return false;
  return isatty(STDOUT_FILENO);
}

} // namespace stackwalk
