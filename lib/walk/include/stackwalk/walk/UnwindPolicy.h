// Which unwinders walk a thread, in which order, for each OS and
// architecture: the one place this is decided, used by the walk, every fuzz
// target and the tests. Each step is asked in turn for a frame's caller; the
// first that finds one wins (StackWalker), so the order is one of trust.
#pragma once

#include "stackwalk/core/Arch.h"
#include "stackwalk/core/StackWalker.h"
#include "stackwalk/unwinder/ArmExidxUnwinder.h"
#include "stackwalk/unwinder/CfiUnwinder.h"
#include "stackwalk/unwinder/CodeAnalysisUnwinder.h"
#include "stackwalk/unwinder/EntryFunctionUnwinder.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"
#include "stackwalk/unwinder/GoStackSwitchUnwinder.h"
#include "stackwalk/unwinder/SigreturnUnwinder.h"
#include "stackwalk/unwinder/StackWinUnwinder.h"
#include "stackwalk/unwinder/SymbolFileCfiUnwinder.h"
#include "stackwalk/unwinder/ThreadBirthUnwinder.h"
#include "stackwalk/unwinder/Win64Unwinder.h"

#include <string_view>
#include <vector>

namespace stackwalk {

class ManagedThreadWalk;

enum class UnwindStep {
  ManagedCode,        // the managed runtime's code, by the unwind info it records
  HijackedReturn,     // the managed runtime's hijack stub, entered by a ret: its HijackFrame's registers
  Win64UnwindInfo,    // a PE module's function table (.pdata, .xdata)
  Cfi,                // DWARF CFI: .eh_frame, .debug_frame (of the file or its debug file)
  Sigreturn,          // a signal trampoline without CFI, known by its instructions
  GoStackSwitch,      // Go's cgo call: from the system stack back to the goroutine's
  ArmExidx,           // 32-bit ARM's exception index table (.ARM.exidx, .ARM.extab)
  SymbolFileCfi,      // STACK CFI records of a Breakpad symbol file
  StackWin,           // STACK WIN records of a Breakpad symbol file (32-bit Windows frame data)
  Dynamic,            // unwind info registered at run time with libunwind
  RuntimeTransitions, // the managed runtime's transition records (capital-F Frames)
  EntryFunction,      // the executable's entry function (_start) is the outermost frame
  ThreadBirth,        // a thread at its first instruction, after the clone that made it
  CodeAnalysis,       // x86 code without unwind tables, by its instructions from the function's start
  BadCall,            // a call through a bad pointer: the return address at the stack pointer or in the link register
  FramePointer,       // the frame-pointer chain
  Scan,               // a stack scan for return addresses that follow a call
};
std::string_view unwindStepName(UnwindStep step);

// The steps for a target's threads, in order; empty where stackwalk cannot
// unwind the architecture yet (each thread is its context frame).
std::vector<UnwindStep> unwindPolicy(Arch arch, OS os);

// The unwinders of one dump, by step, and the chain the policy makes of them
// for a thread. `cfi` and `dynamic` outlive it: the CFI cache is shared by a
// batch's dumps, libunwind's registrations are the dump's (RegisteredCode).
class DumpUnwinders {
public:
  DumpUnwinders(const Target &target, CfiUnwinder &cfi, Unwinder &dynamic);
  // A thread's chain; the managed steps only when a runtime walks the thread.
  std::vector<Unwinder *> chainFor(ManagedThreadWalk *managed);

private:
  std::vector<Unwinder *> unwindDataOf(const std::vector<UnwindStep> &steps);

  std::vector<UnwindStep> steps_;
  CfiUnwinder &cfi_;
  Unwinder &dynamic_;
  Win64Unwinder win64_; // keyed by module base: one dump's only
  EntryFunctionUnwinder entryFunction_;
  ThreadBirthUnwinder threadBirth_;
  BadCallUnwinder badCall_;
  CodeAnalysisUnwinder codeAnalysis_;
  CodeAnalysisUnwinder codeAnalysisForScan_{/*requireReturnAddress=*/false};
  SigreturnUnwinder sigreturn_;
  GoStackSwitchUnwinder goStackSwitch_;
  ArmExidxUnwinder armExidx_;
  SymbolFileCfiUnwinder symbolFileCfi_;
  StackWinUnwinder stackWin_;
  FramePointerUnwinder framePointer_;
  StackScanUnwinder scan_;
};

} // namespace stackwalk
