// Windows exception names against the Windows SDK's own definitions, as
// MinGW-w64 ships them (ntstatus.h, winnt.h, minwinbase.h), when they are installed: every
// STATUS_ and EXCEPTION_ name stackwalk prints is defined there with the code
// it is printed for.
#include "Streams.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>

using namespace stackwalk;

namespace {

// NAME -> value of `#define NAME ((NTSTATUS)0x...)` and `#define NAME STATUS_...`.
std::map<std::string, uint32_t> headerCodes() {
  std::map<std::string, uint32_t> codes;
  std::map<std::string, std::string> aliases;
  const std::regex value(R"(#define\s+(\w+)\s+\(\(\w+\)\s*0x([0-9A-Fa-f]+)L?\))"), alias(R"(#define\s+(\w+)\s+(STATUS_\w+)\s*$)");
  for (const char *header : {"/usr/share/mingw-w64/include/ntstatus.h", "/usr/share/mingw-w64/include/winnt.h",
                             "/usr/share/mingw-w64/include/minwinbase.h"}) {
    std::ifstream in(header);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, value)) codes[m[1]] = uint32_t(std::stoul(m[2], nullptr, 16));
      else if (std::regex_search(line, m, alias)) aliases[m[1]] = m[2];
    }
  }
  for (const auto &[name, target] : aliases)
    if (auto found = codes.find(target); found != codes.end()) codes[name] = found->second;
  return codes;
}

} // namespace

TEST_CASE("STATUS_ and EXCEPTION_ names are the Windows SDK's for their codes") {
  std::map<std::string, uint32_t> sdk = headerCodes();
  if (sdk.empty()) {
    WARN("MinGW-w64's ntstatus.h and winnt.h are not installed: not compared");
    return;
  }
  const uint32_t printed[] = {0xC0000005, 0x80000003, 0x80000004, 0x80000002, 0xC0000006, 0xC0000008, 0xC000001D,
                              0xC0000025, 0xC0000026, 0xC000008C, 0xC000008D, 0xC000008E, 0xC000008F, 0xC0000090,
                              0xC0000091, 0xC0000092, 0xC0000093, 0xC0000094, 0xC0000095, 0xC0000096, 0xC00000FD,
                              0xC0000374, 0xC0000409, 0xC000000D, 0xC0000017, 0xC0000135, 0xC0000139, 0xC000013A,
                              0xC0000142, 0xC0000417, 0xC0000420, 0xC0000602, 0x80000001};
  for (uint32_t code : printed) {
    std::string name = minidump::exceptionName(code, OS::Windows);
    CAPTURE(code, name);
    REQUIRE(sdk.count(name));
    CHECK(sdk[name] == code);
  }
}
