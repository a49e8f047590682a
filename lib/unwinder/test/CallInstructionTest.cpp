#include "CallInstruction.h"

#include <catch2/catch.hpp>

using namespace stackwalk;

namespace {
// A target whose code at 0x1000 ends with `bytes`; returns the address after them.
bool followsCall(std::vector<uint8_t> bytes, Arch arch = Arch::X86_64) {
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> code(16, 0x90);
  code.insert(code.end(), bytes.begin(), bytes.end());
  memory->add(0x1000, code);
  Target target(arch, OS::Linux, "test", std::move(memory));
  return callBefore(target, 0x1000 + code.size()) == CallBefore::Yes;
}
} // namespace

TEST_CASE("x86 call forms are recognized by the bytes before the return address") {
  CHECK(followsCall({0xe8, 0x10, 0x20, 0x30, 0x40}));             // call rel32
  CHECK(followsCall({0xff, 0xd0}));                               // call rax
  CHECK(followsCall({0x41, 0xff, 0xd3}));                         // call r11
  CHECK(followsCall({0xff, 0x15, 0x01, 0x02, 0x03, 0x04}));       // call [rip+disp32]
  CHECK(followsCall({0xff, 0x50, 0x08}));                         // call [rax+8]
  CHECK(followsCall({0xff, 0x14, 0xc5, 1, 2, 3, 4}));             // call [rax*8+disp32]
  CHECK(followsCall({0xff, 0x54, 0x24, 0x08}));                   // call [rsp+8]
}

TEST_CASE("other instructions before an address are not calls") {
  CHECK_FALSE(followsCall({0x90, 0x90, 0x90, 0x90, 0x90}));
  CHECK_FALSE(followsCall({0xff, 0xe0}));       // jmp rax (/4)
  CHECK_FALSE(followsCall({0x48, 0x89, 0xe5})); // mov rbp, rsp
}

TEST_CASE("arm64 bl and blr") {
  CHECK(followsCall({0x00, 0x00, 0x00, 0x94}, Arch::Arm64)); // bl
  CHECK(followsCall({0x00, 0x02, 0x3f, 0xd6}, Arch::Arm64)); // blr x16
  CHECK_FALSE(followsCall({0x1f, 0x20, 0x03, 0xd5}, Arch::Arm64)); // nop
}

TEST_CASE("ARM bl, blx <label> and blx <register>; Thumb's 32-bit bl and blx, 16-bit blx <register>") {
  auto followsArmCall = [](std::vector<uint8_t> bytes, bool thumb) {
    auto memory = std::make_unique<BufferMemory>();
    std::vector<uint8_t> code(16, 0);
    code.insert(code.end(), bytes.begin(), bytes.end());
    memory->add(0x1000, code);
    Target target(Arch::Arm, OS::Linux, "test", std::move(memory));
    // A Thumb caller's return address carries bit 0.
    return callBefore(target, 0x1000 + code.size() + (thumb ? 1 : 0)) == CallBefore::Yes;
  };
  CHECK(followsArmCall({0x10, 0x00, 0x00, 0xeb}, false));       // bl
  CHECK(followsArmCall({0x10, 0x00, 0x00, 0xfa}, false));       // blx <label>
  CHECK(followsArmCall({0x33, 0xff, 0x2f, 0xe1}, false));       // blx r3
  CHECK_FALSE(followsArmCall({0x04, 0xe0, 0x2d, 0xe5}, false)); // push {lr}
  CHECK(followsArmCall({0x00, 0xf0, 0x10, 0xf8}, true));        // bl (f000 f810)
  CHECK(followsArmCall({0x00, 0xf0, 0x10, 0xe8}, true));        // blx <label> (f000 e810)
  CHECK(followsArmCall({0x00, 0xbf, 0x98, 0x47}, true));        // nop; blx r3
  CHECK_FALSE(followsArmCall({0x00, 0xbf, 0x00, 0xbf}, true));  // nop; nop
  CHECK_FALSE(followsArmCall({0x00, 0xf0, 0x10, 0xf8}, false)); // Thumb bytes read as ARM
}

namespace {
// What callBefore says of `bytes` placed at 0x1010, the return address right after
// them, where the dump maps [0x1000, 0x2000) as code, and `mappedAlso` if any.
CallBefore directCall(std::vector<uint8_t> bytes, Arch arch, bool thumb = false,
                      std::optional<MemoryRegion> mappedAlso = std::nullopt) {
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> code(0x10, 0);
  code.insert(code.end(), bytes.begin(), bytes.end());
  uint64_t returnAddress = 0x1000 + code.size() + (thumb ? 1 : 0);
  memory->add(0x1000, code);
  Target target(arch, OS::Linux, "test", std::move(memory));
  target.regions = {{0x1000, 0x2000, true, false, true}};
  if (mappedAlso) target.regions.push_back(*mappedAlso);
  return callBefore(target, returnAddress);
}
} // namespace

// Bytes that decode as a direct call in a stack scan's candidate are often
// something else (ARM's PLT read as Thumb): the target must be code where the
// dump says what code is. Each call below is at 0x1010.
TEST_CASE("a direct call goes to code where the dump maps code") {
  using enum CallBefore;
  SECTION("x86-64 call rel32") {
    CHECK(directCall({0xe8, 0xeb, 0xff, 0xff, 0xff}, Arch::X86_64) == Yes); // to 0x1000
    CHECK(directCall({0xe8, 0x10, 0x20, 0x30, 0x40}, Arch::X86_64) == No);  // to 0x40303025
  }
  SECTION("32-bit x86 wraps at 4 GiB") {
    MemoryRegion top{0xffff0000, 0xffff2000, true, false, true};
    CHECK(directCall({0xe8, 0x00, 0x00, 0xff, 0xff}, Arch::X86, false, top) == Yes);   // to 0xffff1015
    CHECK(directCall({0xe8, 0x00, 0x00, 0xff, 0xff}, Arch::X86_64, false, top) == No); // below zero
  }
  SECTION("arm64 bl") {
    CHECK(directCall({0xfc, 0xff, 0xff, 0x97}, Arch::Arm64) == Yes); // bl 0x1000
    CHECK(directCall({0x00, 0x00, 0x10, 0x94}, Arch::Arm64) == No);  // bl 0x401010
    CHECK(directCall({0x00, 0x02, 0x3f, 0xd6}, Arch::Arm64) == Yes); // blr x16: no target to check
  }
  SECTION("ARM bl and blx <label>") {
    CHECK(directCall({0xfa, 0xff, 0xff, 0xeb}, Arch::Arm) == Yes); // bl 0x1000
    CHECK(directCall({0x00, 0x00, 0x10, 0xeb}, Arch::Arm) == No);  // bl 0x401018
    CHECK(directCall({0xfa, 0xff, 0xff, 0xfa}, Arch::Arm) == Yes); // blx 0x1000
    CHECK(directCall({0x00, 0x00, 0x10, 0xfa}, Arch::Arm) == No);  // blx 0x401018
  }
  SECTION("Thumb bl and blx <label>") {
    CHECK(directCall({0x00, 0xf0, 0x10, 0xf8}, Arch::Arm, true) == Yes); // bl 0x1034
    CHECK(directCall({0x00, 0xf1, 0x00, 0xf8}, Arch::Arm, true) == No);  // bl 0x101014
    CHECK(directCall({0xff, 0xf7, 0xf6, 0xef}, Arch::Arm, true) == Yes); // blx 0x1000
    // The ARM PLT entry before main (ldr pc, [ip, #1848]!), read as Thumb:
    // blx 0xffb39b8c, where nothing is mapped.
    CHECK(directCall({0x38, 0xf7, 0xbc, 0xe5}, Arch::Arm, true) == No);
    CHECK(directCall({0x38, 0xf7, 0xbc, 0xe5}, Arch::Arm, true, 
                     MemoryRegion{0xffb39000, 0xffb3a000, true, false, true}) == Yes);
  }
}
