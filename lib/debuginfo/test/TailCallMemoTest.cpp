#include "stackwalk/debuginfo/TailCallMemo.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace stackwalk;

namespace {

// Two frames: a callee, and the caller that returns into it.
std::vector<Frame> pairIn(const Module &callee, const Module &caller, uint64_t offset) {
  std::vector<Frame> frames(2);
  frames[0].module = &callee;
  frames[0].ip = callee.base + offset;
  frames[1].module = &caller;
  frames[1].ip = caller.base + offset + 0x100;
  frames[1].ipIsExact = false;
  return frames;
}

std::shared_ptr<ModuleImage> fileImage() {
  auto image = ModuleImage::open("/proc/self/exe"); // a file, not bytes of a dump
  REQUIRE(bool(image));
  return std::move(*image);
}

} // namespace

TEST_CASE("TailCallMemo gives a pair's frames to a dump with the same files elsewhere", "[tail-call-memo]") {
  std::shared_ptr<ModuleImage> image = fileImage(), other = fileImage();
  Module first, second;
  first.image = second.image = image;
  first.base = 0x10000;
  second.base = 0x550000;
  TailCallMemo memo;
  std::vector<Frame> before = pairIn(first, first, 0x40);
  memo.keep(before, 0, {{first.base + 0x77, &first, "a.c", 12}});

  std::vector<Frame> after = pairIn(second, second, 0x40);
  auto found = memo.find(after, 0);
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].returnAddress == second.base + 0x77);
  CHECK((*found)[0].module == &second);
  CHECK((*found)[0].file == "a.c");
  CHECK((*found)[0].line == 12u);

  CHECK_FALSE(memo.find(pairIn(second, second, 0x48), 0)); // other addresses
  Module elsewhere;
  elsewhere.image = other; // the same file, opened again: another image
  CHECK_FALSE(memo.find(pairIn(elsewhere, elsewhere, 0x40), 0));
  Module caller = second;
  CHECK_FALSE(memo.find(pairIn(second, caller, 0x40), 0)); // two modules, not one
}

TEST_CASE("TailCallMemo keeps no pair in an image made from a dump's memory", "[tail-call-memo]") {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  auto bytes = ModuleImage::fromBytes({std::istreambuf_iterator<char>(self), {}}, "memory");
  REQUIRE(bool(bytes));
  Module inMemory;
  inMemory.image = std::move(*bytes);
  REQUIRE(inMemory.image->inMemory());
  Module file;
  file.image = fileImage();
  TailCallMemo memo;
  std::vector<Frame> frames = pairIn(file, inMemory, 0x40);
  memo.keep(frames, 0, {});
  CHECK_FALSE(memo.find(frames, 0));
  std::vector<Frame> both = pairIn(file, file, 0x40);
  memo.keep(both, 0, {});
  auto none = memo.find(both, 0); // kept: no tail-call frames there
  REQUIRE(none);
  CHECK(none->empty());
}
