#include "stackwalk/core/Registers.h"
#include "stackwalk/core/WindowsContext.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;

namespace {
uint64_t load64(const std::vector<uint8_t> &bytes, size_t offset) {
  uint64_t v;
  std::memcpy(&v, &bytes[offset], 8);
  return v;
}
uint32_t load32(const std::vector<uint8_t> &bytes, size_t offset) {
  uint32_t v;
  std::memcpy(&v, &bytes[offset], 4);
  return v;
}
} // namespace

TEST_CASE("registers are unknown until set, and can be forgotten") {
  RegisterFile regs(Arch::X86_64);
  CHECK_FALSE(regs.pc());
  regs.setPc(0x1234);
  regs.set(3, 7);
  CHECK(regs.pc() == 0x1234u);
  CHECK(regs.get(3) == 7u);
  regs.forget(3);
  CHECK_FALSE(regs.isKnown(3));
  CHECK_FALSE(regs.get(RegisterFile::Capacity + 5));
}

TEST_CASE("pc, sp and fp are the architecture's DWARF registers") {
  CHECK(RegisterFile(Arch::X86_64).pcRegister() == 16);
  CHECK(RegisterFile(Arch::X86_64).spRegister() == 7);
  CHECK(RegisterFile(Arch::Arm64).pcRegister() == 32);
  CHECK(RegisterFile(Arch::Arm64).fpRegister() == 29);
  CHECK(RegisterFile(Arch::X86).spRegister() == 4);
  CHECK(registerByName(Arch::X86_64, "r12") == 12u);
  CHECK(registerByName(Arch::Arm64, "lr") == 30u);
}

TEST_CASE("callee-saved registers follow the platform ABI") {
  RegisterFile regs(Arch::X86_64);
  CHECK(regs.isCalleeSaved(3, OS::Linux));      // rbx
  CHECK_FALSE(regs.isCalleeSaved(0, OS::Linux)); // rax
  CHECK_FALSE(regs.isCalleeSaved(4, OS::Linux)); // rsi: System V scratch
  CHECK(regs.isCalleeSaved(4, OS::Windows));     // rsi: Microsoft x64 nonvolatile
}

TEST_CASE("Win64 unwind register numbers map to DWARF numbers") {
  CHECK(dwarfFromWin64Register(0) == 0); // rax
  CHECK(dwarfFromWin64Register(1) == 2); // rcx
  CHECK(dwarfFromWin64Register(4) == 7); // rsp
  CHECK(dwarfFromWin64Register(5) == 6); // rbp
  CHECK(dwarfFromWin64Register(12) == 12);
}

TEST_CASE("an x86-64 CONTEXT holds the registers at Windows' offsets") {
  RegisterFile regs(Arch::X86_64);
  regs.setPc(0x401000);
  regs.setSp(0x7ff0);
  regs.set(6, 0x8000); // rbp
  auto bytes = toWindowsContext(regs);
  REQUIRE(bytes.size() == 0x4d0);
  CHECK(load64(bytes, 0xf8) == 0x401000);
  CHECK(load64(bytes, 0x98) == 0x7ff0);
  CHECK(load64(bytes, 0xa0) == 0x8000);
  // CONTROL is incomplete (no eflags, cs, ss) and so is INTEGER: neither is claimed.
  CHECK(load32(bytes, 0x30) == 0x100000);
}

TEST_CASE("a CONTEXT round-trips, and only claimed groups are read") {
  RegisterFile regs(Arch::X86_64);
  for (const RegisterInfo &info : regs.layout())
    if (info.number <= 16) regs.set(info.number, 0x1000 + info.number);
  for (unsigned reg : {49u, 51u, 52u}) regs.set(reg, reg);
  auto bytes = toWindowsContext(regs);
  CHECK(load32(bytes, 0x30) == 0x100003); // AMD64 | CONTROL | INTEGER
  auto back = fromWindowsContext(Arch::X86_64, bytes);
  REQUIRE(bool(back));
  CHECK(back->get(12) == 0x100cu);
  CHECK(back->pc() == 0x1010u);
  CHECK_FALSE(back->isKnown(53)); // ds: SEGMENTS not claimed

  uint32_t controlOnly = 0x100001;
  std::memcpy(&bytes[0x30], &controlOnly, 4);
  auto control = fromWindowsContext(Arch::X86_64, bytes);
  REQUIRE(bool(control));
  CHECK(control->pc());
  CHECK_FALSE(control->isKnown(0));
}

TEST_CASE("a CONTEXT that ends before its registers is an error; one that ends after them (lldb's) or a longer one (XSTATE) is read") {
  std::vector<uint8_t> tooShort(0xff); // rip is 0xf8..0x100
  auto result = fromWindowsContext(Arch::X86_64, tooShort);
  REQUIRE_FALSE(bool(result));
  CHECK(llvm::toString(result.takeError()) == "CONTEXT of 255 bytes is shorter than its registers (256 bytes)");
  RegisterFile regs(Arch::X86_64);
  regs.setPc(0x401000);
  regs.setSp(0x7ffc0000);
  regs.set(3, 0xb);
  std::vector<uint8_t> full = toWindowsContext(regs);
  std::vector<uint8_t> lldb(full.begin(), full.begin() + 720); // no floating-point or vector state
  auto integer = fromWindowsContext(Arch::X86_64, lldb);
  REQUIRE(bool(integer));
  CHECK(integer->pc() == 0x401000u);
  CHECK(integer->get(3) == 0xbu);
  std::vector<uint8_t> xstate(0x4d0 + 0x300);
  auto longer = fromWindowsContext(Arch::X86_64, xstate);
  CHECK(bool(longer));
}

TEST_CASE("ContextFlags naming only the architecture (Breakpad's macOS writer) means every register is there") {
  std::vector<uint8_t> bytes(0x4d0, 0);
  uint32_t flags = 0x00100000;
  std::memcpy(&bytes[0x30], &flags, 4);
  uint64_t rip = 0x102a68cd4, rbp = 0x7ffeed1aa9b0;
  std::memcpy(&bytes[0xf8], &rip, 8);
  std::memcpy(&bytes[0xa0], &rbp, 8);
  auto regs = fromWindowsContext(Arch::X86_64, bytes);
  REQUIRE(bool(regs));
  CHECK(regs->pc() == rip);
  CHECK(regs->get(6) == rbp);
  CHECK(regs->isKnown(0));
}

TEST_CASE("an x86-64 CONTEXT's FltSave is its x87 and SSE state when ContextFlags claims CONTEXT_FLOATING_POINT") {
  std::vector<uint8_t> bytes(0x4d0, 0);
  uint16_t fcw = 0x027f;                   // Windows' default control word
  std::memcpy(&bytes[0x100], &fcw, 2);     // FltSave.ControlWord
  bytes[0x100 + 0xa0 + 16 * 3] = 0x42;     // xmm3's lowest byte
  uint32_t flags = 0x00100003;             // CONTROL | INTEGER
  std::memcpy(&bytes[0x30], &flags, 4);
  CHECK_FALSE(fpStateFromWindowsContext(Arch::X86_64, bytes));
  flags |= 8; // FLOATING_POINT
  std::memcpy(&bytes[0x30], &flags, 4);
  auto state = fpStateFromWindowsContext(Arch::X86_64, bytes);
  REQUIRE(state);
  CHECK(state->fcw == 0x027f);
  CHECK(state->xmm[3][0] == 0x42);
  CHECK_FALSE(fpStateFromWindowsContext(Arch::X86_64, std::span(bytes).first(0x2ff))); // FltSave cut short
  CHECK_FALSE(fpStateFromWindowsContext(Arch::Arm64, bytes));
}

TEST_CASE("an arm64 CONTEXT places pc, sp, fp and lr") {
  RegisterFile regs(Arch::Arm64);
  regs.setPc(0x10);
  regs.setSp(0x20);
  regs.set(29, 0x30);
  regs.set(30, 0x40);
  auto bytes = toWindowsContext(regs);
  REQUIRE(bytes.size() == 0x390);
  CHECK(load64(bytes, 0x108) == 0x10);
  CHECK(load64(bytes, 0x100) == 0x20);
  CHECK(load64(bytes, 0xf0) == 0x30);
  CHECK(load64(bytes, 0xf8) == 0x40);
}

TEST_CASE("an ARM CONTEXT (Windows on ARM) holds r0-r12, sp, lr, pc and cpsr at Windows' offsets") {
  std::vector<uint8_t> bytes(0x1a0, 0);
  auto put32 = [&](size_t offset, uint32_t value) { std::memcpy(&bytes[offset], &value, 4); };
  put32(0, 0x200003); // CONTEXT_ARM | CONTROL | INTEGER
  for (unsigned i = 0; i <= 12; ++i) put32(4 + 4 * i, 0x1000 + i);
  put32(0x38, 0x7f00);     // Sp
  put32(0x3c, 0x401235);   // Lr, with the Thumb bit
  put32(0x40, 0x401000);   // Pc
  put32(0x44, 0x60000030); // Cpsr: Thumb
  auto regs = fromWindowsContext(Arch::Arm, bytes);
  REQUIRE(bool(regs));
  CHECK(regs->get(11) == 0x100b);
  CHECK(regs->sp() == 0x7f00);
  CHECK(regs->get(14) == 0x401235);
  CHECK(regs->pc() == 0x401000);
  CHECK(regs->get(ArmCpsr) == 0x60000030);
  CHECK(toWindowsContext(*regs) == bytes);
  put32(0, 0x200001); // CONTROL only: r0-r12 unknown
  auto control = fromWindowsContext(Arch::Arm, bytes);
  REQUIRE(bool(control));
  CHECK_FALSE(control->isKnown(11));
  CHECK(control->pc() == 0x401000);
}
