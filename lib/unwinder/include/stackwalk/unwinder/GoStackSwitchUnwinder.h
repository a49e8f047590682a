// Go's cgo calls, where a C function's stack ends: runtime.asmcgocall moves
// from the goroutine's stack to the thread's system stack (g0) to call C, and
// DWARF cannot say so (Go's CFI for it reads the return address at the
// system stack's pointer, where a saved goroutine pointer lies; gdb walks
// garbage from there, and a scan found stale frames of the runtime's start).
// What asmcgocall saved to come back is the truth, as Go's own traceback
// takes it: the goroutine (g) and how deep its stack was (g.stack.hi minus
// the stack pointer), in the system stack's frame; or, already on a system
// stack, the stack pointer itself. The caller is the goroutine's frame that
// called asmcgocall (runtime.cgocall), at the stack pointer it had then.
//
// Known by the instructions after the `call *%rax` to C, which read those
// slots back (Go 1.19's asm_amd64.s; the slots' offsets are read from them,
// so a Go whose frame differs is still read, and one whose code differs is
// not touched). No symbol is needed: stripped Go programs keep this code.
// Without the code (a minidump with Breakpad symbol files), a return address
// in the function a symbol file names runtime.asmcgocall ends the walk with
// the reason, where Go's CFI would read the saved goroutine pointer. x86-64 only.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <map>

namespace stackwalk {

class GoStackSwitchUnwinder : public Unwinder {
public:
  // The goroutine's frame comes from the runtime's own record of its stack.
  FrameTrust trust() const override { return FrameTrust::RuntimeFrame; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

private:
  // Whether the module may hold Go's runtime: a file with Go's function table
  // (.gopclntab, which stripped Go programs keep), or no file to tell. Other
  // modules' code is not read: it faulted in text pages nothing else reads
  // (0.3 ms on the .NET test dump's 287 frames).
  bool mayHoldGoRuntime(const Module *module);
  std::map<const ModuleImage *, bool> goImages_;
};

} // namespace stackwalk
