#include "X86CodeAnalysis.h"

#include <catch2/catch.hpp>

#include <map>

using namespace stackwalk;

namespace {

std::map<unsigned, int64_t> savedOf(const X86FrameShape &shape) {
  std::map<unsigned, int64_t> saved;
  for (const auto &slot : shape.saved) saved[slot.dwarfRegister] = slot.cfaOffset;
  return saved;
}

} // namespace

TEST_CASE("x86-64 code analysis: at a function's first byte the return address is at the stack pointer") {
  auto shape = analyzeX86Frame({}, true);
  REQUIRE(shape);
  CHECK(shape->cfaFromStackPointer == 8);
  CHECK_FALSE(shape->cfaFromFramePointer);
  CHECK(shape->saved.empty());
}

TEST_CASE("x86-64 code analysis: a frame-pointer prologue makes the frame rbp-based") {
  const std::vector<uint8_t> code = {
      0x55,                         // push rbp
      0x48, 0x89, 0xe5,             // mov rbp, rsp
      0x48, 0x83, 0xec, 0x10,       // sub rsp, 0x10
      0xe8, 0x00, 0x01, 0x00, 0x00, // call somewhere
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK(shape->cfaFromFramePointer == 16);
  CHECK(shape->cfaFromStackPointer == 32);
  CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{6, -16}});
}

TEST_CASE("x86-64 code analysis: pushes and sub rsp without a frame pointer") {
  const std::vector<uint8_t> code = {
      0x41, 0x54,             // push r12
      0x53,                   // push rbx
      0x48, 0x83, 0xec, 0x18, // sub rsp, 0x18
      0x48, 0x89, 0xfb,       // mov rbx, rdi
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK_FALSE(shape->cfaFromFramePointer);
  CHECK(shape->cfaFromStackPointer == 8 + 8 + 8 + 0x18);
  CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{12, -16}, {3, -24}});
}

TEST_CASE("x86-64 code analysis: after an epilogue's ret the body's frame holds again") {
  const std::vector<uint8_t> code = {
      0x53,                         // push rbx
      0x48, 0x83, 0xec, 0x20,       // sub rsp, 0x20
      0x85, 0xff,                   // test edi, edi
      0x74, 0x06,                   // je +6
      0x48, 0x83, 0xc4, 0x20,       // add rsp, 0x20
      0x5b,                         // pop rbx
      0xc3,                         // ret
      0xb8, 0x01, 0x00, 0x00, 0x00, // mov eax, 1
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK(shape->cfaFromStackPointer == 0x30);
  CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{3, -16}});
  // Inside the epilogue, before its ret: rbx is restored, the frame released.
  auto inEpilogue = analyzeX86Frame(std::span(code).first(14), true);
  REQUIRE(inEpilogue);
  CHECK(inEpilogue->cfaFromStackPointer == 8);
  CHECK(inEpilogue->saved.empty());
}

TEST_CASE("x86-64 code analysis: a tail call's jmp ends a path too") {
  const std::vector<uint8_t> code = {
      0x48, 0x83, 0xec, 0x08,       // sub rsp, 8
      0x48, 0x83, 0xc4, 0x08,       // add rsp, 8
      0xe9, 0x00, 0x01, 0x00, 0x00, // jmp elsewhere
      0x90,                         // nop
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK(shape->cfaFromStackPointer == 16);
}

TEST_CASE("x86-64 code analysis: leave, lea rsp from rbp and a realigned stack") {
  const std::vector<uint8_t> prologue = {
      0x55,                   // push rbp
      0x48, 0x89, 0xe5,       // mov rbp, rsp
      0x48, 0x83, 0xe4, 0xf0, // and rsp, -16
  };
  auto realigned = analyzeX86Frame(prologue, true);
  REQUIRE(realigned);
  CHECK(realigned->cfaFromFramePointer == 16);
  CHECK_FALSE(realigned->cfaFromStackPointer);

  std::vector<uint8_t> leave = prologue;
  leave.push_back(0xc9); // leave
  auto left = analyzeX86Frame(leave, true);
  REQUIRE(left);
  CHECK_FALSE(left->cfaFromFramePointer);
  CHECK(left->cfaFromStackPointer == 8);
  CHECK(left->saved.empty());

  std::vector<uint8_t> lea = prologue;
  lea.insert(lea.end(), {0x48, 0x8d, 0x65, 0xf0}); // lea rsp, [rbp-0x10]
  lea.insert(lea.end(), {0x48, 0x89, 0xec});       // mov rsp, rbp ... from the frame pointer again
  auto restored = analyzeX86Frame(lea, true);
  REQUIRE(restored);
  CHECK(restored->cfaFromFramePointer == 16);
  CHECK(restored->cfaFromStackPointer == 16);
}

TEST_CASE("x86-64 code analysis: refuses what it cannot follow") {
  // and rsp, -16 with no frame pointer holding the frame.
  CHECK_FALSE(analyzeX86Frame(std::vector<uint8_t>{0x48, 0x83, 0xe4, 0xf0}, true));
  // sub rsp, rax (alloca) likewise.
  CHECK_FALSE(analyzeX86Frame(std::vector<uint8_t>{0x48, 0x29, 0xc4}, true));
  // The address in the middle of an instruction (sub rsp, imm8 cut short).
  CHECK_FALSE(analyzeX86Frame(std::vector<uint8_t>{0x53, 0x48, 0x83}, true));
  // Bytes that are no instruction.
  CHECK_FALSE(analyzeX86Frame(std::vector<uint8_t>{0x06}, true));
}

TEST_CASE("x86-64 code analysis: the frame pointer reused as a general register") {
  const std::vector<uint8_t> code = {
      0x55,             // push rbp
      0x48, 0x89, 0xe5, // mov rbp, rsp
      0x48, 0x89, 0xfd, // mov rbp, rdi
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK_FALSE(shape->cfaFromFramePointer);
  CHECK(shape->cfaFromStackPointer == 16);
}

TEST_CASE("i386 code analysis: frame pointer, callee-saved pushes, a get-pc call") {
  const std::vector<uint8_t> code = {
      0x55,                         // push ebp
      0x89, 0xe5,                   // mov ebp, esp
      0x57,                         // push edi
      0x53,                         // push ebx
      0x83, 0xec, 0x10,             // sub esp, 0x10
      0xe8, 0x00, 0x00, 0x00, 0x00, // call 1f
      0x5b,                         // 1: pop ebx (an address, not ebx's saved value)
      0x6a, 0x01,                   // push 1
      0xe8, 0x10, 0x00, 0x00, 0x00, // call somewhere
  };
  auto shape = analyzeX86Frame(code, false);
  REQUIRE(shape);
  CHECK(shape->cfaFromFramePointer == 8);
  CHECK(shape->cfaFromStackPointer == 4 + 4 + 4 + 4 + 0x10 + 4);
  CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{5, -8}, {7, -12}, {3, -16}});
  // Without the frame-pointer prologue: the stack pointer's count alone.
  auto bySp = analyzeX86Frame(std::span(code).subspan(3), false);
  REQUIRE(bySp);
  CHECK_FALSE(bySp->cfaFromFramePointer);
  CHECK(bySp->cfaFromStackPointer == 4 + 4 + 4 + 0x10 + 4);
}

TEST_CASE("x86-64 code analysis: an epilogue with other instructions among its releases, ended by a tail call") {
  // glibc's pthread_mutex_lock: the tail call's arguments set up between the pops.
  const std::vector<uint8_t> code = {
      0x53,                               // push rbx
      0x48, 0x83, 0xec, 0x10,             // sub rsp, 0x10
      0x48, 0x83, 0xc4, 0x10,             // add rsp, 0x10
      0x48, 0x8d, 0x77, 0x16,             // lea rsi, [rdi+0x16]
      0x5b,                               // pop rbx
      0x81, 0xe2, 0x80, 0x00, 0x00, 0x00, // and edx, 0x80
      0xe9, 0x00, 0x01, 0x00, 0x00,       // jmp elsewhere
      0x48, 0x89, 0x7c, 0x24, 0x08,       // mov [rsp+8], rdi
      0xe8, 0x00, 0x01, 0x00, 0x00,       // call somewhere
  };
  auto shape = analyzeX86Frame(code, true);
  REQUIRE(shape);
  CHECK(shape->cfaFromStackPointer == 0x20);
  CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{3, -16}});
}

TEST_CASE("i386 code analysis: a jump that leaves arguments' space on the stack stays in the body") {
  const std::vector<uint8_t> code = {
      0x53,                         // push ebx
      0x83, 0xec, 0x08,             // sub esp, 8
      0x50,                         // push eax
      0xe8, 0x00, 0x01, 0x00, 0x00, // call f
      0x83, 0xc4, 0x04,             // add esp, 4
      0xeb, 0x02,                   // jmp +2
      0x90, 0x90,                   // nop; nop
  };
  auto shape = analyzeX86Frame(code, false);
  REQUIRE(shape);
  CHECK(shape->cfaFromStackPointer == 4 + 4 + 8);
}

TEST_CASE("i386 code analysis: where a forward branch goes, the frame is the branch's") {
  SECTION("after a call that never returns, made with arguments pushed") {
    const std::vector<uint8_t> code = {
        0x53,                         // push ebx
        0x83, 0xec, 0x08,             // sub esp, 8
        0x75, 0x06,                   // jne L
        0x50,                         // push eax
        0xe8, 0x00, 0x01, 0x00, 0x00, // call abort-like function (never returns)
        0x90,                         // L: nop
    };
    auto shape = analyzeX86Frame(code, false);
    REQUIRE(shape);
    CHECK(shape->cfaFromStackPointer == 4 + 4 + 8);
  }
  SECTION("after a ret whose epilogue began by freeing a call's arguments") {
    // python3.11's PyObject_Call: add esp, 0x10 frees the call's arguments, add esp, 0x2c the frame.
    const std::vector<uint8_t> code = {
        0x53,                   // push ebx
        0x83, 0xec, 0x2c,       // sub esp, 0x2c
        0x74, 0x0e,             // je L
        0x83, 0xec, 0x0c,       // sub esp, 0xc
        0x50,                   // push eax
        0xff, 0xd7,             // call edi
        0x83, 0xc4, 0x10,       // add esp, 0x10
        0x83, 0xc4, 0x2c,       // add esp, 0x2c
        0x5b,                   // pop ebx
        0xc3,                   // ret
        0x90,                   // L: nop
    };
    auto shape = analyzeX86Frame(code, false);
    REQUIRE(shape);
    CHECK(shape->cfaFromStackPointer == 4 + 4 + 0x2c);
    CHECK(savedOf(*shape) == std::map<unsigned, int64_t>{{3, -8}});
  }
}
