// --unwind-info's Windows x64 description on a synthetic image: every field
// of the RUNTIME_FUNCTION and UNWIND_INFO, each code decoded, an indirect
// entry, a handler, chained entries, a leaf, and damaged data.
#include "SyntheticStack.h"

#include "stackwalk/unwinder/UnwindDescription.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::synthetic;

namespace {

constexpr uint64_t Base = 0x140000000;
enum Op : uint8_t { Push = 0, AllocLarge = 1, AllocSmall = 2, SetFp = 3, Save = 4, Epilog = 6, SaveXmm = 8, MachFrame = 10 };

uint16_t code(uint8_t offset, uint8_t op, uint8_t info) { return uint16_t(offset | op << 8 | info << 12); }

struct Image {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(0x2000, 0);
  explicit Image(uint32_t entries) { writePeHeaders(bytes, 0x300, entries); }
  void put32(size_t at, uint32_t value) { std::memcpy(bytes.data() + at, &value, 4); }
  void entry(size_t at, uint32_t begin, uint32_t end, uint32_t unwindInfo) {
    put32(at, begin), put32(at + 4, end), put32(at + 8, unwindInfo);
  }
  // UNWIND_INFO; returns where what follows its codes starts.
  size_t info(size_t at, uint8_t flags, uint8_t prolog, std::vector<uint16_t> codes, uint8_t frame = 0) {
    bytes[at] = uint8_t(1 | flags << 3), bytes[at + 1] = prolog, bytes[at + 2] = uint8_t(codes.size());
    bytes[at + 3] = frame;
    if (!codes.empty()) std::memcpy(&bytes[at + 4], codes.data(), codes.size() * 2); // no null source for none
    return at + 4 + ((codes.size() + 1) & ~size_t(1)) * 2;
  }
  std::vector<std::string> describe(uint32_t rva) {
    auto memory = makeMemory({{Base, bytes}});
    auto lines = describeWin64Unwind(*memory, Base, Base + rva);
    if (!lines) FAIL(llvm::toString(lines.takeError()));
    return *lines;
  }
  std::string error(uint32_t rva) {
    auto memory = makeMemory({{Base, bytes}});
    auto lines = describeWin64Unwind(*memory, Base, Base + rva);
    return lines ? "" : llvm::toString(lines.takeError());
  }
};

} // namespace

TEST_CASE("every field and code of an UNWIND_INFO, in prolog order") {
  Image image(1);
  image.entry(0x300, 0x1000, 0x1080, 0x400);
  // push rbp; push rbx; sub rsp, 0x100; lea rbp, [rsp+0x20]; mov [rbp+..], rsi; movaps [..], xmm6
  image.info(0x400, 0, 0x18,
             {code(0x18, SaveXmm, 6), 0x0003, code(0x14, Save, 6), 0x0010, code(0x10, SetFp, 0),
              code(0x0c, AllocLarge, 0), 0x0020, code(0x05, AllocSmall, 1), code(0x02, Push, 3), code(0x01, Push, 5)},
             /*frame: rbp, offset 2*16*/ 5 | 2 << 4);
  std::vector<std::string> lines = image.describe(0x1040);
  REQUIRE(lines.size() == 9);
  CHECK(lines[0] == "RUNTIME_FUNCTION: begin 0x140001000 (RVA 0x1000), end 0x140001080 (RVA 0x1080), unwind info RVA 0x400");
  CHECK(lines[1] == "UNWIND_INFO at 0x140000400: version 1, flags none, prolog size 0x18, 10 code slot(s), frame "
                    "register rbp, offset 0x20");
  CHECK(lines[2] == "  [0] offset 0x18: UWOP_SAVE_XMM128 xmm6 at frame + 0x30");
  CHECK(lines[3] == "  [2] offset 0x14: UWOP_SAVE_NONVOL rsi at frame + 0x80");
  CHECK(lines[4] == "  [4] offset 0x10: UWOP_SET_FPREG rbp = rsp + 0x20");
  CHECK(lines[5] == "  [5] offset 0xc: UWOP_ALLOC_LARGE size 0x100");
  CHECK(lines[6] == "  [7] offset 0x5: UWOP_ALLOC_SMALL size 0x10");
  CHECK(lines[7] == "  [8] offset 0x2: UWOP_PUSH_NONVOL rbx");
  CHECK(lines[8] == "  [9] offset 0x1: UWOP_PUSH_NONVOL rbp");
}

TEST_CASE("an indirect entry, a handler, and chained entries in turn") {
  Image image(2);
  image.entry(0x300, 0x1000, 0x1020, 0x400);
  image.entry(0x30c, 0x1050, 0x1090, 0x320 | 1); // indirect: the entry at RVA 0x320
  image.entry(0x320, 0x1050, 0x1090, 0x440);
  size_t trailer = image.info(0x440, 4, 0, {code(0, Push, 7)}); // chained to the function at 0x1000
  image.entry(trailer, 0x1000, 0x1020, 0x400);
  trailer = image.info(0x400, 1, 1, {code(1, MachFrame, 1)}); // with an exception handler
  image.put32(trailer, 0x1800);
  std::vector<std::string> lines = image.describe(0x1060);
  REQUIRE(lines.size() == 8);
  CHECK(lines[0] == "RUNTIME_FUNCTION: begin 0x140001050 (RVA 0x1050), end 0x140001090 (RVA 0x1090), unwind info RVA 0x321");
  CHECK(lines[1] == "indirect, to RUNTIME_FUNCTION: begin 0x140001050 (RVA 0x1050), end 0x140001090 (RVA 0x1090), unwind "
                    "info RVA 0x440");
  CHECK(lines[2] == "UNWIND_INFO at 0x140000440: version 1, flags UNW_FLAG_CHAININFO, prolog size 0x0, 1 code slot(s), "
                    "frame register none");
  CHECK(lines[3] == "  [0] offset 0x0: UWOP_PUSH_NONVOL rdi");
  CHECK(lines[4] == "chained to RUNTIME_FUNCTION: begin 0x140001000 (RVA 0x1000), end 0x140001020 (RVA 0x1020), unwind "
                    "info RVA 0x400");
  CHECK(lines[5] == "UNWIND_INFO at 0x140000400: version 1, flags UNW_FLAG_EHANDLER, prolog size 0x1, 1 code slot(s), "
                    "frame register none");
  CHECK(lines[6] == "  [0] offset 0x1: UWOP_PUSH_MACHFRAME with error code");
  CHECK(lines[7] == "  handler RVA 0x1800 (0x140001800)");
}

TEST_CASE("a leaf, a chain that loops, and unreadable data") {
  Image image(1);
  image.entry(0x300, 0x1000, 0x1020, 0x400);
  CHECK(image.describe(0x1100) == std::vector<std::string>{
                                      "no RUNTIME_FUNCTION covers 0x140001100: a leaf function (it saves no register "
                                      "and does not move rsp; the return address is at rsp)"});
  size_t trailer = image.info(0x400, 4, 0, {});
  image.entry(trailer, 0x1000, 0x1020, 0x400); // chained to itself
  CHECK(image.error(0x1010) == "chained unwind info is deeper than 32 (a loop?)");
  image.entry(0x300, 0x1000, 0x1020, 0x3000); // past the image
  CHECK(image.error(0x1010) == "UNWIND_INFO at 0x140003000 is not readable");
}
