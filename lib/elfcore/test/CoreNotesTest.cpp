#include "CoreBuilder.h"
#include "stackwalk/elfcore/CoreNotes.h"

#include <catch2/catch.hpp>

using namespace stackwalk;
using namespace stackwalk::elfcore;
using stackwalk::test::Bytes;

TEST_CASE("NT_PRSTATUS gives the tid, the signal and the registers in DWARF numbering") {
  Bytes desc = test::prstatus(4242, 0x401000, 0x7ffe0000, 0x7ffe0100, 11);
  auto status = parsePrStatus(desc, Arch::X86_64, 8);
  REQUIRE(status);
  CHECK(status->tid == 4242);
  CHECK(status->signal == 11);
  CHECK(status->registers.pc() == 0x401000u);
  CHECK(status->registers.sp() == 0x7ffe0000u);
  CHECK(status->registers.get(6) == 0x7ffe0100u); // rbp
  CHECK(status->registers.isKnown(58));           // fs_base
  CHECK_FALSE(parsePrStatus(Bytes{}, Arch::X86_64, 8));
}

TEST_CASE("NT_PRPSINFO gives pid, name and arguments") {
  Bytes desc;
  desc.resize(136);
  desc.set<uint32_t>(24, 77);
  std::memcpy(desc.data() + 40, "myprog", 6);
  std::memcpy(desc.data() + 56, "./myprog --flag   ", 18);
  auto info = parsePrPsInfo(desc);
  REQUIRE(info);
  CHECK(info->pid == 77);
  CHECK(info->name == "myprog");
  CHECK(info->arguments == "./myprog --flag");
}

TEST_CASE("NT_SIGINFO: a fault address only for a kernel-sent fault, the sender of a sent signal") {
  Bytes desc;
  desc.resize(128);
  desc.set<int32_t>(0, 11);
  desc.set<int32_t>(8, 1); // SEGV_MAPERR
  desc.set<uint64_t>(16, 0x10);
  auto fault = parseSigInfo(desc);
  REQUIRE(fault);
  CHECK(fault->source.faultAddress == 0x10u);
  CHECK_FALSE(fault->source.senderPid);
  desc.set<int32_t>(8, -6); // SI_TKILL: sent by tgkill; si_pid, si_uid where si_addr would be
  desc.set<uint32_t>(16, 4242);
  desc.set<uint32_t>(20, 1000);
  auto sent = parseSigInfo(desc);
  CHECK_FALSE(sent->source.faultAddress);
  CHECK(sent->source.senderPid == 4242u);
  CHECK(sent->source.senderUid == 1000u);
  desc.set<int32_t>(0, 6);
  desc.set<int32_t>(8, 1); // a kernel-raised SIGABRT carries neither
  CHECK_FALSE(parseSigInfo(desc)->source.faultAddress);
  CHECK_FALSE(parseSigInfo(desc)->source.senderPid);
}

TEST_CASE("NT_FILE lists mappings with their paths; a bad count yields nothing") {
  Bytes desc;
  desc.put<uint64_t>(2);
  desc.put<uint64_t>(4096);
  for (uint64_t v : {0x1000, 0x3000, 0, 0x3000, 0x4000, 2}) desc.put<uint64_t>(v);
  for (char c : std::string("/bin/a\0/lib/b\0", 14)) desc.push_back(uint8_t(c));
  auto mappings = parseFileNote(desc);
  REQUIRE(mappings.size() == 2);
  CHECK(mappings[1].path == "/lib/b");
  CHECK(mappings[1].fileOffset == 2 * 4096);
  desc.set<uint64_t>(0, 1u << 30);
  CHECK(parseFileNote(desc).empty());
}

TEST_CASE("the auxiliary vector ends at AT_NULL") {
  Bytes desc;
  for (uint64_t v : {3, 0x400040, 33, 0x7fff0000, 0, 0, 9, 9}) desc.put<uint64_t>(v);
  auto auxv = parseAuxv(desc);
  REQUIRE(auxv.size() == 2);
  CHECK(auxv[1] == std::make_pair(uint64_t(33), uint64_t(0x7fff0000)));
}

TEST_CASE("only signals whose default action dumps core are crashes") {
  CHECK(dumpsCore(11));
  CHECK(dumpsCore(6));
  CHECK_FALSE(dumpsCore(19)); // SIGSTOP
  CHECK_FALSE(dumpsCore(0));
}

TEST_CASE("NT_ARM_PAC_MASK gives the instruction mask; a short note gives none") {
  std::vector<uint8_t> desc(16);
  uint64_t data = 0x007f000000000000, insn = 0x00ff000000000000;
  std::memcpy(desc.data(), &data, 8);
  std::memcpy(desc.data() + 8, &insn, 8);
  CHECK(parsePacInstructionMask(desc) == insn);
  desc.resize(15);
  CHECK_FALSE(parsePacInstructionMask(desc));
}

TEST_CASE("ELF32 (i386) notes: prstatus, prpsinfo, siginfo, NT_FILE and auxv in their 32-bit layouts") {
  // struct elf_prstatus: pr_cursig at 12, pr_pid at 24, pr_reg at 72: ebx ecx
  // edx esi edi ebp eax ds es fs gs orig_eax eip cs eflags esp ss.
  Bytes status;
  status.resize(144);
  status.set<int16_t>(12, 6);
  status.set<uint32_t>(24, 23101);
  status.set<uint32_t>(72 + 5 * 4, 0xffa80010);  // ebp
  status.set<uint32_t>(72 + 6 * 4, 0xfffffffc);  // eax
  status.set<uint32_t>(72 + 12 * 4, 0xf77f7430); // eip
  status.set<uint32_t>(72 + 15 * 4, 0xffa80000); // esp
  auto prstatus = parsePrStatus(status, Arch::X86, 4);
  REQUIRE(prstatus);
  CHECK(prstatus->tid == 23101);
  CHECK(prstatus->signal == 6);
  CHECK(prstatus->registers.pc() == 0xf77f7430u);
  CHECK(prstatus->registers.sp() == 0xffa80000u);
  CHECK(prstatus->registers.fp() == 0xffa80010u);
  CHECK(prstatus->registers.get(0) == 0xfffffffcu); // eax, not sign-extended
  CHECK_FALSE(parsePrStatus(std::span(status.data(), 100), Arch::X86, 4)); // pr_reg cut short

  Bytes psinfo;
  psinfo.resize(124);
  psinfo.set<uint32_t>(12, 23100);
  std::memcpy(psinfo.data() + 28, "backtrace", 9);
  std::memcpy(psinfo.data() + 44, "./backtrace --gencore", 21);
  auto info = parsePrPsInfo(psinfo, 4);
  REQUIRE(info);
  CHECK(info->pid == 23100);
  CHECK(info->name == "backtrace");
  CHECK(info->arguments == "./backtrace --gencore");

  Bytes siginfo;
  siginfo.resize(128);
  siginfo.set<int32_t>(0, 11);
  siginfo.set<int32_t>(8, 2); // SEGV_ACCERR
  siginfo.set<uint32_t>(12, 0x45);
  siginfo.set<uint32_t>(16, 0xdeadbeef); // past si_addr: no part of the address
  CHECK(parseSigInfo(siginfo, 4)->source.faultAddress == 0x45u);
  siginfo.set<int32_t>(8, -6); // SI_TKILL: si_pid, si_uid
  siginfo.set<uint32_t>(12, 4242);
  siginfo.set<uint32_t>(16, 1000);
  CHECK(parseSigInfo(siginfo, 4)->source.senderPid == 4242u);
  CHECK(parseSigInfo(siginfo, 4)->source.senderUid == 1000u);

  Bytes file;
  for (uint32_t v : {1u, 4096u, 0x8048000u, 0x810a000u, 1u}) file.put<uint32_t>(v);
  for (char c : std::string("/bin/a\0", 7)) file.push_back(uint8_t(c));
  auto mappings = parseFileNote(file, 4);
  REQUIRE(mappings.size() == 1);
  CHECK(mappings[0].start == 0x8048000u);
  CHECK(mappings[0].end == 0x810a000u);
  CHECK(mappings[0].fileOffset == 4096u);
  CHECK(mappings[0].path == "/bin/a");

  Bytes auxv;
  for (uint32_t v : {3u, 0x8048034u, 9u, 0x804991cu, 0u, 0u}) auxv.put<uint32_t>(v);
  CHECK(parseAuxv(auxv, 4) == std::vector<std::pair<uint64_t, uint64_t>>{{3, 0x8048034}, {9, 0x804991c}});
}

TEST_CASE("x32's NT_PRSTATUS: the 32-bit header (pr_pid at 24, pr_reg at 72), x86-64's 64-bit registers") {
  Bytes status;
  status.resize(296);
  status.set<uint32_t>(24, 3843);
  status.set<uint64_t>(72 + 16 * 8, 0x40b2a2);   // rip
  status.set<uint64_t>(72 + 19 * 8, 0xf7fe0000); // rsp
  auto prstatus = parsePrStatus(status, Arch::X86_64, 4);
  REQUIRE(prstatus);
  CHECK(prstatus->tid == 3843);
  CHECK(prstatus->registers.pc() == 0x40b2a2u);
  CHECK(prstatus->registers.sp() == 0xf7fe0000u);
}
