#include "stackwalk/core/FxsaveArea.h"

#include <catch2/catch.hpp>

#include <map>
#include <vector>

using namespace stackwalk;

TEST_CASE("an FXSAVE image gives the x87 and SSE registers by gdb's names, most significant digit first") {
  std::vector<uint8_t> image(FxsaveArea::Size, 0);
  image[0] = 0x7f, image[1] = 0x03;                          // fcw 0x037f
  image[2] = 0x00, image[3] = 0x38;                          // fsw: top of stack 7
  image[6] = 0x34, image[7] = 0x12;                          // fop
  image[24] = 0x80, image[25] = 0x1f;                        // mxcsr 0x1f80
  for (int i = 0; i < 10; ++i) image[32 + 16 + i] = uint8_t(i + 1); // st1: bytes 01..0a, little-endian
  image[32 + 16 + 10] = 0xee;                                // the slot's padding: not st1's
  for (int i = 0; i < 16; ++i) image[160 + 15 * 16 + i] = uint8_t(0xf0 + i); // xmm15
  auto area = FxsaveArea::parse(image);
  REQUIRE(area);
  std::map<std::string, std::string> registers;
  for (const auto &[name, value] : area->registers()) registers[name] = value;
  CHECK(registers.size() == 4 + 8 + 16);
  CHECK(registers["fctrl"] == "0x037f");
  CHECK(registers["fstat"] == "0x3800");
  CHECK(registers["fop"] == "0x1234");
  CHECK(registers["mxcsr"] == "0x00001f80");
  CHECK(registers["st0"] == "0x00000000000000000000");
  CHECK(registers["st1"] == "0x0a090807060504030201");
  CHECK(registers["xmm0"] == "0x00000000000000000000000000000000");
  CHECK(registers["xmm15"] == "0xfffefdfcfbfaf9f8f7f6f5f4f3f2f1f0");
}

TEST_CASE("an XSAVE image's AVX component gives the ymm registers; in its initial state they are the xmm registers") {
  std::vector<uint8_t> fxsave(FxsaveArea::Size, 0);
  fxsave[160 + 2 * 16] = 0x22; // xmm2's lowest byte
  std::vector<uint8_t> xsave(832, 0);
  xsave[576 + 2 * 16 + 15] = 0x99; // ymm2's highest byte
  auto area = FxsaveArea::parse(fxsave);
  REQUIRE(area);
  REQUIRE(area->addXsave(xsave)); // XSTATE_BV without the AVX bit: the initial state
  std::map<std::string, std::string> registers;
  for (const auto &[name, value] : area->registers()) registers[name] = value;
  CHECK(registers.size() == 4 + 8 + 16 + 16);
  CHECK(registers["ymm2"] == "0x0000000000000000000000000000000000000000000000000000000000000022");
  xsave[512] = 1 << 2; // XSTATE_BV: AVX in use
  REQUIRE(area->addXsave(xsave));
  for (const auto &[name, value] : area->registers()) registers[name] = value;
  CHECK(registers["ymm2"] == "0x9900000000000000000000000000000000000000000000000000000000000022");

  xsave[520 + 7] = 0x80; // XCOMP_BV bit 63: the compacted format, not what Linux gives
  CHECK_FALSE(area->addXsave(xsave));
  CHECK_FALSE(area->addXsave(std::span(xsave).first(831)));
}

TEST_CASE("an FXSAVE image cut short is not read") {
  std::vector<uint8_t> image(FxsaveArea::Size - 1, 0);
  CHECK_FALSE(FxsaveArea::parse(image));
}
