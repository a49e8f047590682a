// The walking engine: yields one frame at a time, asking a list of unwinders in
// order of trust how to get from a frame to its caller.
#pragma once

#include "stackwalk/core/Registers.h"
#include "stackwalk/core/Target.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stackwalk {

enum class FrameTrust { Context, UnwindInfo, Cfi, FramePointer, Scan, RuntimeFrame, Dynamic, Manual, CallSite, CodeAnalysis };
std::string_view trustName(FrameTrust trust);

struct Frame {
  unsigned index = 0;
  FrameTrust trust = FrameTrust::Context;
  RegisterFile regs;
  uint64_t ip = 0;
  uint64_t sp = 0;
  // True when ip is the address of the next instruction to run (the context
  // frame, or a frame interrupted by a signal); false when it is a return
  // address, whose call instruction is found at ip - 1.
  bool ipIsExact = true;
  // The signal trampoline (glibc's __restore_rt): the kernel made its address
  // the handler's return address, so no call precedes it.
  bool signalTrampoline = false;
  // True when sp is only a lower bound of the frame's stack pointer: the frame
  // was found through its callee's frame record, which on arm64 and ARM may lie
  // anywhere in the callee's frame (GCC puts it at the bottom), so this frame's
  // stack pointer (its callee's CFA) may be higher than the record's end.
  bool spIsLowerBound = false;
  // Reached across a switch of stacks its callee's runtime recorded (a Go cgo
  // call's goroutine stack, below the system stack the C code ran on): its
  // sp need not be above its callee's.
  bool onOtherStack = false;
  // Its ip was a register of its callee's by the callee's unwind data (x86-64
  // CFI's `rip=rcx` in libgcc's eh_return epilogue, which jumps to a landing
  // pad with the stack already its caller's), not a slot on the stack: the
  // caller of an interrupted frame may then share its stack pointer, as a
  // leaf's caller does where the return address stays in a link register.
  bool ipFromRegister = false;
  // The bytes of stack arguments this frame pushed for the frame it called,
  // which lie at its stack pointer, where that callee's unwind data told
  // (32-bit Windows frame info); 0 when unknown.
  uint64_t calleeArgumentBytes = 0;
  const Module *module = nullptr;

  // Where to look up unwind info: the call instruction for a return address.
  uint64_t lookupAddress() const { return ipIsExact ? ip : ip - 1; }
  // Where to look up the function: the same, but a trampoline is its own start.
  uint64_t symbolAddress() const { return signalTrampoline ? ip : lookupAddress(); }
};

// What one unwinder says about a frame's caller.
struct UnwindResult {
  enum class Status {
    NoInfo,    // this unwinder has nothing to say; try the next one
    EndOfStack, // the unwind info marks this frame as the outermost one
    Caller,     // `caller` holds the caller's registers
    // This unwinder knows the frame, and that what the dump holds cannot lead
    // to its caller: the walk stops (no_unwind_info), no other unwinder guesses.
    CannotContinue,
  };
  Status status = Status::NoInfo;
  RegisterFile caller;
  bool callerIpIsExact = false; // the caller was interrupted (signal frame)
  bool callerSpIsLowerBound = false; // Frame::spIsLowerBound of the caller
  bool callerOnOtherStack = false;   // Frame::onOtherStack of the caller
  bool callerIpFromRegister = false; // Frame::ipFromRegister of the caller
  std::optional<FrameTrust> trust; // overrides the unwinder's own (e.g. dynamic)
  uint64_t argumentBytes = 0;      // the unwound frame's own stack arguments, where known
  std::string detail;           // why NoInfo / EndOfStack / CannotContinue, for stop reasons (empty: not this unwinder's kind of frame)

  static UnwindResult noInfo(std::string why) {
    UnwindResult r;
    r.detail = std::move(why);
    return r;
  }
  static UnwindResult cannotContinue(std::string why) {
    UnwindResult r;
    r.status = Status::CannotContinue;
    r.detail = std::move(why);
    return r;
  }
  static UnwindResult endOfStack(std::string why) {
    UnwindResult r;
    r.status = Status::EndOfStack;
    r.detail = std::move(why);
    return r;
  }
};

class Unwinder {
public:
  virtual ~Unwinder() = default;
  virtual FrameTrust trust() const = 0;
  virtual UnwindResult unwind(const Frame &frame, const Target &target) = 0;
  // Whether the unwind info marks this frame as a signal trampoline.
  virtual bool isSignalTrampoline(const Frame &frame, const Target &target) { return false; }
  // The context this unwinder's data records for code interrupted at `ip`
  // (a fault the .NET runtime saved in a FaultingExceptionFrame), when its
  // stack pointer is `sp` or lies on another stack than `sp`: a caller found
  // there by other unwind info (a signal handler's CFI that describes the
  // interrupted context as its caller, without marking itself a signal frame)
  // has an exact ip, the faulting instruction, not a return address; and a
  // handler on an alternate signal stack (a stack overflow's) reaches that ip
  // through its own frames with a stack pointer on that stack, not the thread's.
  virtual std::optional<RegisterFile> recordedInterruption(uint64_t ip, uint64_t sp, const Target &target) {
    return std::nullopt;
  }
  // Whether the address lies in code this unwinder describes outside every
  // module (a JIT's code heaps): a return address there is code even where
  // the dump shows no executable memory (Wine's minidumps have no regions).
  virtual bool describesCodeAt(uint64_t address, const Target &target) { return false; }
  // Whether this unwinder's data has a function (an FDE) that begins at
  // `address`: a stack word equal to it is far more often a pointer to the
  // function than the return of a call that ends the function before.
  virtual bool startsFunctionAt(uint64_t address, const Target &target) { return false; }
};

// A frame of `regs` as the walk makes one: its ip, sp and module.
Frame frameOf(const Target &target, const RegisterFile &regs, FrameTrust trust, bool ipIsExact);
// A caller's pc that an unwinder found as a return address, made its code
// address: ARM's Thumb bit noted in the caller's cpsr, arm64's authentication
// bits stripped.
void takeReturnAddress(const Target &target, RegisterFile &caller);

// Why a walk ended. The names are part of the JSON contract (stop_reason).
enum class StopReason {
  None,             // not stopped yet
  EndOfStack,       // unwind info marks the outermost frame
  NullIp,           // the caller's instruction pointer is 0
  NoContext,        // the thread's context has no pc or sp
  SpNotIncreasing,  // the caller's stack pointer is not above the callee's
  Loop,             // a frame repeats
  IpNotExecutable,  // the caller's instruction pointer is not in executable memory
  NoUnwindInfo,     // no unwinder could find the caller
  MaxFrames,        // --max-frames reached
  NoUnwinder,       // no unwinder exists for the architecture
};
std::string_view stopReasonName(StopReason reason);

struct WalkLimits {
  unsigned maxFrames = 1024;
};

// A walk that starts where the user says rather than at the thread's
// context, as WinDbg's `k = <sp> <ip>` does for a stack too damaged to
// walk from the top. The ip is taken as a return address.
struct ManualStart {
  uint64_t sp = 0, ip = 0;
  std::optional<uint64_t> fp;
};

class StackWalker {
public:
  StackWalker(const Target &target, const ThreadInfo &thread,
              std::vector<Unwinder *> unwinders, WalkLimits limits = {},
              std::optional<ManualStart> start = std::nullopt);

  // The next frame, or nullopt when the walk has ended (see stopReason()).
  std::optional<Frame> next();
  StopReason stopReason() const { return stopReason_; }
  const std::string &stopDetail() const { return stopDetail_; }

private:
  std::optional<Frame> unwindOnce();
  std::optional<std::pair<StopReason, std::string>> rejectCaller(const Frame &caller) const;
  bool isCode(const Frame &caller) const;
  std::optional<RegisterFile> recordedInterruption(const RegisterFile &caller) const;
  std::optional<Frame> stop(StopReason reason, std::string detail);

  const Target &target_;
  const ThreadInfo &thread_;
  std::vector<Unwinder *> unwinders_;
  WalkLimits limits_;
  std::optional<ManualStart> start_;
  std::optional<Frame> previous_;
  std::set<std::pair<uint64_t, uint64_t>> seen_; // (ip, sp) of every frame
  bool scanned_ = false;                          // a frame so far was found by the stack scan
  StopReason stopReason_ = StopReason::None;
  std::string stopDetail_;
};

} // namespace stackwalk
