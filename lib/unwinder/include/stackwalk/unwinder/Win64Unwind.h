// Windows x64 unwinding by UNWIND_INFO codes (Microsoft's "x64 exception
// handling"; algorithm as in RtlVirtualUnwind). LLVM has the structures
// (llvm/Support/Win64EH.h) but no unwinder, so this is ours.
//
// It works on any code described by a RUNTIME_FUNCTION whose RVAs are
// relative to a base address: a PE image's .pdata, or JIT-compiled code that
// the .NET runtime describes the same way.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Win64FunctionTable.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace stackwalk {

// Unwinds `frame` (which must be inside `function`) to its caller. Registers
// keep their values only if the calling convention of `abi` preserves them
// across a call: Windows' for Windows code, System V's for the .NET
// runtime's code on other OSes (its JIT follows the platform's convention
// and describes the code with Windows unwind codes). Errors describe
// unreadable or malformed unwind data.
llvm::Expected<UnwindResult> unwindWin64(const MemorySource &memory, uint64_t imageBase,
                                         const RuntimeFunction &function, const Frame &frame, OS abi = OS::Windows);

// The same for a frame at a call (its ip a return address) in a module of
// `target`, whose frame register may be unknown: the scan finds none, and a
// caller of a function that kept none of its own (unwound without it) cannot
// have it back. A function that keeps one (every function of GCC's -O0 code;
// clang's and MSVC's with alloca) is then unwound from the stack pointer its
// prolog left, which the call was made with unless the function moved it
// since; a caller so found must follow a call in `target`'s code, else the
// frame is not unwound (the scan goes on).
llvm::Expected<UnwindResult> unwindWin64AtCall(const Target &target, uint64_t imageBase,
                                               const RuntimeFunction &function, const Frame &frame);

// The frame of a function without unwind data (a leaf): the return address
// is at the stack pointer.
UnwindResult unwindWin64Leaf(const MemorySource &memory, const Frame &frame);

} // namespace stackwalk
