// x86 code analysis (X86CodeAnalysis.h): the input's first byte picks 64-bit
// (even) or 32-bit (odd) code, the rest is a function's code from its start;
// the frame is analysed at the end and at up to 32 addresses through it, as a
// walk asks at each frame's address.
#include "X86CodeAnalysis.h"

#include <algorithm>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 64 * 1024) return 0;
  bool is64 = (data[0] & 1) == 0;
  std::span<const uint8_t> code(data + 1, size - 1);
  size_t step = std::max<size_t>(1, code.size() / 32);
  for (size_t length = 0; length <= code.size(); length += step) (void)stackwalk::analyzeX86Frame(code.first(length), is64);
  (void)stackwalk::analyzeX86Frame(code, is64);
  return 0;
}
