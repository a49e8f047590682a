#include "stackwalk/walk/UnwindPolicy.h"

#include "stackwalk/walk/ManagedRuntime.h"

namespace stackwalk {

std::string_view unwindStepName(UnwindStep step) {
  switch (step) {
  case UnwindStep::ManagedCode: return "managed_code";
  case UnwindStep::HijackedReturn: return "hijacked_return";
  case UnwindStep::Win64UnwindInfo: return "win64_unwind_info";
  case UnwindStep::Cfi: return "cfi";
  case UnwindStep::Sigreturn: return "sigreturn";
  case UnwindStep::GoStackSwitch: return "go_stack_switch";
  case UnwindStep::ArmExidx: return "arm_exidx";
  case UnwindStep::SymbolFileCfi: return "symbol_file_cfi";
  case UnwindStep::StackWin: return "stack_win";
  case UnwindStep::Dynamic: return "dynamic";
  case UnwindStep::RuntimeTransitions: return "runtime_transitions";
  case UnwindStep::EntryFunction: return "entry_function";
  case UnwindStep::ThreadBirth: return "thread_birth";
  case UnwindStep::CodeAnalysis: return "code_analysis";
  case UnwindStep::BadCall: return "bad_call";
  case UnwindStep::FramePointer: return "frame_pointer";
  case UnwindStep::Scan: return "scan";
  }
  return "unknown";
}

std::vector<UnwindStep> unwindPolicy(Arch arch, OS os) {
  using enum UnwindStep;
  // Windows on ARM64: the function tables, and the frame-pointer chain the
  // ABI keeps (x29 always points at a frame record).
  if (arch == Arch::Arm64 && os == OS::Windows)
    return {ManagedCode, HijackedReturn, Win64UnwindInfo, SymbolFileCfi, RuntimeTransitions, BadCall, FramePointer, Scan};
  // arm64 elsewhere (Linux, Android, macOS, iOS): as x86-64 Linux, with the
  // signal trampolines known by their code first. The kernel's
  // __kernel_rt_sigreturn has CFI, but it only follows the frame record the
  // kernel left (CFA = x29; x29 and x30 from it: its comment says as much),
  // which restores neither sp nor x19-x28, and qemu-user's trampoline has
  // none: the saved context in the rt_sigframe is the truth, as gdb's and
  // libunwind's signal-frame unwinders take it. Apple's ABI keeps the
  // frame-pointer chain too, and its dumps come without files: the frame
  // pointer and a symbol file's STACK CFI do the work there.
  // A new thread's first instruction comes before the CFI, as on x86-64.
  if (arch == Arch::Arm64)
    return {ManagedCode,   HijackedReturn, Sigreturn,          ThreadBirth, Cfi,          EntryFunction,
            SymbolFileCfi, Dynamic,        RuntimeTransitions, BadCall,     FramePointer, Scan};
  // 32-bit x86 Windows: the PDB's frame data (as a symbol file's STACK WIN
  // records), then as Breakpad's x86 stackwalker, STACK CFI, the ebp chain
  // most code keeps, and the scan.
  if (arch == Arch::X86 && os == OS::Windows)
    return {StackWin, SymbolFileCfi, BadCall, FramePointer, Scan};
  // i386 Linux: as x86-64 Linux, without a managed runtime (stackwalk reads
  // no 32-bit .NET) or libunwind's registrations. Debian's glibc gives its
  // signal restorers no CFI: they are known by their code.
  if (arch == Arch::X86)
    return {Cfi, EntryFunction, SymbolFileCfi, Sigreturn, CodeAnalysis, BadCall, FramePointer, Scan};
  // Windows on 32-bit ARM: its function tables (ARM's own .pdata format) are
  // not read; a symbol file's STACK CFI, then the r11 frame records its ABI
  // keeps, then the scan.
  if (arch == Arch::Arm && os == OS::Windows) return {SymbolFileCfi, BadCall, FramePointer, Scan};
  // 32-bit ARM Linux: glibc's signal restorers first (their EHABI data would
  // not mark the frame interrupted), DWARF CFI, then the exception index
  // table every ARM binary keeps (as gdb), then as i386 (its restorers done).
  if (arch == Arch::Arm)
    return {Sigreturn, Cfi, ArmExidx, EntryFunction, SymbolFileCfi, BadCall, FramePointer, Scan};
  if (arch != Arch::X86_64) return {};
  // Windows x64 code is described by its function tables (a leaf function
  // needs no entry), and its ABI has no frame-pointer chain: a function that
  // sets up a frame register may pick any nonvolatile one, and says which in
  // its unwind info, so rbp is not followed there. A Breakpad symbol file's
  // STACK CFI stands in for a module file that is not at hand.
  if (os == OS::Windows)
    return {ManagedCode, HijackedReturn, Win64UnwindInfo, SymbolFileCfi, RuntimeTransitions, BadCall, Scan};
  // x86-64 Linux: a signal frame whose restorer has no CFI at hand (libc's
  // file missing) is read from the rt_sigframe, after the unwind data. The
  // entry function ends the walk before a symbol file's CFI, which cannot say
  // that it does (EntryFunctionUnwinder.h); so on every Linux architecture. Go's
  // switch back from C to a goroutine's stack before the CFI, which
  // describes it wrongly. Code no unwind table describes (musl's libc) is
  // analysed from its instructions before the frame pointer and the scan guess.
  // A new thread's first instruction is known before the CFI, which
  // describes its parent where it covers it (ThreadBirthUnwinder.h).
  return {ManagedCode,  HijackedReturn,     GoStackSwitch, ThreadBirth,  Cfi,     EntryFunction, SymbolFileCfi,
          Dynamic,      RuntimeTransitions, Sigreturn,     CodeAnalysis, BadCall, FramePointer,  Scan};
}

DumpUnwinders::DumpUnwinders(const Target &target, CfiUnwinder &cfi, Unwinder &dynamic)
    : steps_(unwindPolicy(target.arch(), target.os())), cfi_(cfi), dynamic_(dynamic),
      scan_(StackScanUnwinder::ContextScanWords, unwindDataOf(steps_)) {}

// The unwinders of the tables modules carry, which the scan checks its candidates by.
std::vector<Unwinder *> DumpUnwinders::unwindDataOf(const std::vector<UnwindStep> &steps) {
  std::vector<Unwinder *> tables;
  for (UnwindStep step : steps) {
    switch (step) {
    case UnwindStep::Win64UnwindInfo: tables.push_back(&win64_); break;
    case UnwindStep::Cfi: tables.push_back(&cfi_); break;
    case UnwindStep::ArmExidx: tables.push_back(&armExidx_); break;
    case UnwindStep::SymbolFileCfi: tables.push_back(&symbolFileCfi_); break;
    case UnwindStep::StackWin: tables.push_back(&stackWin_); break;
    case UnwindStep::CodeAnalysis: tables.push_back(&codeAnalysisForScan_); break;
    default: break;
    }
  }
  return tables;
}

std::vector<Unwinder *> DumpUnwinders::chainFor(ManagedThreadWalk *managed) {
  std::vector<Unwinder *> chain;
  for (UnwindStep step : steps_) {
    Unwinder *unwinder = nullptr;
    switch (step) {
    case UnwindStep::ManagedCode: unwinder = managed ? managed->codeUnwinder() : nullptr; break;
    case UnwindStep::HijackedReturn: unwinder = managed ? managed->hijackUnwinder() : nullptr; break;
    case UnwindStep::Win64UnwindInfo: unwinder = &win64_; break;
    case UnwindStep::Cfi: unwinder = &cfi_; break;
    case UnwindStep::Sigreturn: unwinder = &sigreturn_; break;
    case UnwindStep::GoStackSwitch: unwinder = &goStackSwitch_; break;
    case UnwindStep::ArmExidx: unwinder = &armExidx_; break;
    case UnwindStep::SymbolFileCfi: unwinder = &symbolFileCfi_; break;
    case UnwindStep::StackWin: unwinder = &stackWin_; break;
    case UnwindStep::Dynamic: unwinder = &dynamic_; break;
    case UnwindStep::RuntimeTransitions: unwinder = managed ? managed->transitionUnwinder() : nullptr; break;
    case UnwindStep::EntryFunction: unwinder = &entryFunction_; break;
    case UnwindStep::ThreadBirth: unwinder = &threadBirth_; break;
    case UnwindStep::CodeAnalysis: unwinder = &codeAnalysis_; break;
    case UnwindStep::BadCall: unwinder = &badCall_; break;
    case UnwindStep::FramePointer: unwinder = &framePointer_; break;
    case UnwindStep::Scan: unwinder = &scan_; break;
    }
    if (unwinder) chain.push_back(unwinder);
  }
  return chain;
}

} // namespace stackwalk
