// A cabinet as a symbol server sends one (name.pd_): libmspack opens it and
// extracts the file asked for, as lib/symstore does, through a file each.
#include "Cabinet.h"

#include <cstdio>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string dir = "/tmp/stackwalk-fuzz-cabinet-" + std::to_string(getpid());
  static const bool made = [] { return std::system(("mkdir -p " + dir).c_str()) == 0; }();
  if (!made) return 0;
  std::string cabinet = dir + "/input.pd_", output = dir + "/output.pdb";
  if (FILE *file = std::fopen(cabinet.c_str(), "wb")) {
    std::fwrite(data, 1, size, file);
    std::fclose(file);
  }
  llvm::consumeError(stackwalk::extractFromCabinet(cabinet, "input.pdb", output, 16 << 20));
  std::remove(output.c_str());
  return 0;
}
