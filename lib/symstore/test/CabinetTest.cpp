// Cabinets from a symbol server are untrusted: a damaged one is an error,
// and libmspack says nothing on stackwalk's stderr about it.
#include "Cabinet.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace stackwalk;

namespace {

// What the call wrote to file descriptor 2.
template <typename F> std::string stderrOf(F call) {
  std::string path = (std::filesystem::temp_directory_path() / "stackwalk-cabinet-stderr").string();
  std::fflush(stderr);
  int saved = dup(2);
  FILE *capture = std::fopen(path.c_str(), "w");
  dup2(fileno(capture), 2);
  call();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::fclose(capture);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return text;
}

} // namespace

TEST_CASE("a cabinet whose file continues from a cabinet before it is an error, and nothing is printed") {
  // CFHEADER (36 bytes) of one folder and one file, then CFFOLDER (8 bytes:
  // data at offset 0x7fffffff, one block, no compression), then CFFILE
  // "a.pdb" of 100 bytes in folder 0xFFFD: continued from the previous
  // cabinet, which libmspack reports as an incomplete set.
  std::vector<uint8_t> cab = {'M', 'S', 'C', 'F', 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 44, 0, 0, 0, 0, 0, 0, 0,
                              3, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  cab.insert(cab.end(), {0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0});
  cab.insert(cab.end(), {100, 0, 0, 0, 0, 0, 0, 0, 0xfd, 0xff, 0x21, 0x59, 0, 0, 0x20, 0, 'a', '.', 'p', 'd', 'b', 0});
  auto dir = std::filesystem::temp_directory_path() / "stackwalk-cabinet-test";
  std::filesystem::create_directories(dir);
  std::ofstream((dir / "a.pd_").string(), std::ios::binary).write(reinterpret_cast<const char *>(cab.data()), cab.size());
  llvm::Error result = llvm::Error::success();
  std::string printed = stderrOf([&] {
    result = extractFromCabinet((dir / "a.pd_").string(), "a.pdb", (dir / "a.pdb").string(), 1 << 20);
  });
  CHECK(bool(result));
  llvm::consumeError(std::move(result));
  CHECK(printed.empty());
  std::filesystem::remove_all(dir);
}
