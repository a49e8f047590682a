// Microdumps on hand-written logcat text: the records Breakpad's Android writer
// emits (O, V, R, S, C, M), each logcat prefix, and what is refused.
#include "stackwalk/minidump/MicrodumpLoader.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

using namespace stackwalk;

namespace {

// An old-layout Breakpad arm64 context (context_flags with bit 31): x_n = n + 0x100,
// sp = 0x7000, pc = 0x5000, as the C record's hex.
std::string arm64OldContext() {
  std::string hex;
  auto word = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      char b[3];
      std::snprintf(b, sizeof b, "%02X", unsigned((v >> (8 * i)) & 0xff));
      hex += b;
    }
  };
  word(0x80000006, 8);
  for (unsigned n = 0; n < 31; ++n) word(0x100 + n, 8);
  word(0x7000, 8); // sp
  word(0x5000, 8); // pc
  word(0x60000000, 4); // cpsr
  hex += std::string(2 * (796 - 276), '0');
  return hex;
}

std::unique_ptr<Target> load(const std::string &text) {
  auto target = loadMicrodump(text);
  if (!target) FAIL(llvm::toString(target.takeError()));
  return std::move(*target);
}

// Why the text is refused; empty when it loads.
std::string refusal(const std::string &text) {
  auto target = loadMicrodump(text);
  return target ? std::string() : llvm::toString(target.takeError());
}

std::string microdump(const std::string &prefix, const std::string &arch) {
  std::string out = "unrelated logcat line\n";
  for (std::string record : {std::string("-----BEGIN BREAKPAD MICRODUMP-----"), std::string("V App:1.2.3"),
                             "O A " + arch + " 02 aarch64 Android 14", std::string("R 0000000B SIGSEGV 00000010"),
                             std::string("S 0 0000000000007000 0000000000007000 0000000000000010"),
                             std::string("S 0000000000007000 0102030405060708"),
                             std::string("S 0000000000007008 1112131415161718"), "C " + arm64OldContext(),
                             std::string("M 0000000000004000 0000000000000000 0000000000002000 "
                                         "D6D1FEC9A15DE7F38A236898871A2E770 libapp.so"),
                             std::string("-----END BREAKPAD MICRODUMP-----")})
    out += prefix + record + "\n";
  return out;
}

} // namespace

TEST_CASE("a microdump gives its thread, stack, modules, system and crash") {
  const char *prefix = GENERATE("W/google-breakpad( 3728): ", "02-23 15:49:14.700  1740  1739 F google-breakpad: ");
  std::string text = microdump(prefix, "arm64");
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t *>(text.data()), text.size());
  REQUIRE(looksLikeMicrodump(bytes));
  auto target = load(text);
  CHECK(target->arch() == Arch::Arm64);
  CHECK(target->format() == "microdump");
  CHECK(target->osVersion == "Android 14");
  REQUIRE(target->threads.size() == 1);
  const RegisterFile &regs = target->threads[0].context;
  CHECK(regs.pc() == 0x5000u);
  CHECK(regs.sp() == 0x7000u);
  CHECK(regs.get(29) == 0x100u + 29);
  CHECK(regs.get(30) == 0x100u + 30);
  REQUIRE(target->crash);
  CHECK(target->crash->name == "SIGSEGV");
  CHECK(target->crash->signal == 11);
  CHECK(target->crash->address == 0x10u);
  CHECK(target->readValue<uint64_t>(0x7008) == 0x1817161514131211u); // consecutive S records join
  REQUIRE(target->modules.size() == 1);
  CHECK(target->modules[0].name == "libapp.so");
  CHECK(target->modules[0].base == 0x4000u);
  CHECK(target->modules[0].size == 0x2000u);
  CHECK(target->modules[0].breakpadDebugId() == "D6D1FEC9A15DE7F38A236898871A2E770");
  CHECK(target->warnings.empty());
}

TEST_CASE("a microdump of an architecture stackwalk cannot read is refused, naming it") {
  CHECK_THAT(refusal(microdump("W/google-breakpad(1): ", "mips")), Catch::Contains("architecture 'mips'"));
}

TEST_CASE("a microdump cut short is read as far as it goes, and says so") {
  std::string text = microdump("W/google-breakpad(1): ", "arm64");
  text = text.substr(0, text.find("W/google-breakpad(1): M "));
  auto target = load(text);
  CHECK(target->modules.empty());
  CHECK(target->warnings == std::vector<std::string>{"the microdump has no END line: it may be cut short"});
}

TEST_CASE("a microdump with a malformed stack record is refused") {
  std::string text = microdump("W/google-breakpad(1): ", "arm64");
  text.replace(text.find("0102030405060708"), 16, "01020304050607ZZ");
  CHECK_THAT(refusal(text), Catch::Contains("not hexadecimal"));
}

TEST_CASE("text without a microdump is not one") {
  std::string text = "W/google-breakpad(1): hello\n";
  CHECK_FALSE(looksLikeMicrodump({reinterpret_cast<const uint8_t *>(text.data()), text.size()}));
}
