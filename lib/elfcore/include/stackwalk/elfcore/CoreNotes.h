// Parsers for the payloads of Linux core notes. The kernel and gdb write these
// structures in the machine's native layout; LLVM has no parsers for them. A
// live process gives the same structures (ptrace's NT_PRSTATUS register set,
// /proc/PID/auxv), so lib/live reads them here too.
#pragma once

#include "stackwalk/core/Auxv.h" // NT_AUXV
#include "stackwalk/core/FxsaveArea.h"
#include "stackwalk/core/Registers.h"
#include "stackwalk/core/Signals.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk::elfcore {

enum NoteType : uint32_t {
  NT_PRSTATUS = 1,
  NT_PRFPREG = 2, // x86-64: user_fpregs_struct, the FXSAVE layout
  NT_PRPSINFO = 3,
  NT_AUXV = 6,
  NT_SIGINFO = 0x53494749,
  NT_FILE = 0x46494c45,
  NT_ARM_PAC_MASK = 0x406, // a "LINUX" note: struct user_pac_mask { data_mask, insn_mask }
  NT_X86_XSTATE = 0x202,   // a "LINUX" note: the XSAVE image, standard format
};

// e_phnum's escape value when the count is in section 0's sh_info.
constexpr uint16_t PN_XNUM = 0xffff;

struct PrStatus {
  uint32_t tid = 0;
  int signal = 0; // pr_cursig
  RegisterFile registers;
  std::optional<FxsaveArea> fpState; // x86-64: the NT_PRFPREG note after it
};

struct PrPsInfo {
  uint32_t pid = 0;
  std::string name;      // pr_fname
  std::string arguments; // pr_psargs
};

struct SigInfo {
  int signal = 0;
  int code = 0;
  SignalSource source; // the fault address, or the sender
};

struct FileMapping {
  uint64_t start = 0, end = 0, fileOffset = 0;
  std::string path;
};

// The layouts of the core's class: `wordSize` is 8 in an ELF64 core, 4 in an
// ELF32 one (i386, ARM, and x32, whose registers are still x86-64's); the
// architecture says which registers.
std::optional<PrStatus> parsePrStatus(std::span<const uint8_t> desc, Arch arch, unsigned wordSize);
// The registers alone (prstatus's pr_reg: x86-64's and i386's user_regs_struct, arm64's user_pt_regs).
std::optional<RegisterFile> parseUserRegs(std::span<const uint8_t> regs, Arch arch);
std::optional<PrPsInfo> parsePrPsInfo(std::span<const uint8_t> desc, unsigned wordSize = 8);
std::optional<SigInfo> parseSigInfo(std::span<const uint8_t> desc, unsigned wordSize = 8);
// The bits of a code pointer that hold its pointer-authentication signature
// (NT_ARM_PAC_MASK's insn_mask).
std::optional<uint64_t> parsePacInstructionMask(std::span<const uint8_t> desc);
// Returns as many mappings as are well-formed.
std::vector<FileMapping> parseFileNote(std::span<const uint8_t> desc, unsigned wordSize = 8);

// Whether the signal's default action writes a core (signal(7)).
bool dumpsCore(int signal);

} // namespace stackwalk::elfcore
