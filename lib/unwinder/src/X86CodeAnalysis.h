// Where an x86 function's frame is at an address, from its instructions: for
// code without unwind tables (musl's libc, programs built with
// -fno-asynchronous-unwind-tables), as LLDB's x86 assembly inspection and
// gdb's prologue analyzers do. The instructions from the function's first
// byte up to the address are decoded in order (by Zydis, ZydisLibrary.h: no
// instruction set is decoded by hand here), following what each does to
// the stack pointer: pushes and pops, `sub`/`add`/`lea` of the stack pointer
// by a constant, `mov rbp, rsp` and `leave`. A `ret` or unconditional jump
// ends a path: the code after it is reached from the function's body, so the
// frame is what it was before the epilogue that preceded it.
//
// Refused (nullopt) where the answer would be a guess: an instruction that
// does not decode, or one that changes the stack pointer in a way not
// followed here while no frame pointer holds the frame; and without Zydis.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace stackwalk {

struct X86FrameShape {
  // The canonical frame address (the stack pointer before the call pushed
  // its return address, which lies just below it) is the stack pointer plus
  // this, where the stack pointer's changes were followed, and the frame
  // pointer plus that, where it was set from the stack pointer (`mov rbp,
  // rsp`, which code without a frame pointer does too, keeping a local's
  // address) and not changed since. At least one of them is known.
  std::optional<int64_t> cfaFromStackPointer, cfaFromFramePointer;
  // Callee-saved registers pushed and not yet popped: DWARF number and the
  // slot's offset from the CFA (negative).
  struct SavedRegister {
    unsigned dwarfRegister;
    int64_t cfaOffset;
  };
  std::vector<SavedRegister> saved;
};

// `code` is the function's bytes from its first up to the frame's address
// (not included); `is64`: x86-64, else i386. The callee-saved registers
// reported are System V's (rbx, rbp, r12-r15; ebx, esi, edi, ebp).
std::optional<X86FrameShape> analyzeX86Frame(std::span<const uint8_t> code, bool is64);

} // namespace stackwalk
