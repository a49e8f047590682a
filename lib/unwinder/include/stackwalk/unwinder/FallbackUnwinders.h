// The unwinders of last resort, used where no unwind information covers a frame.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include <vector>

namespace stackwalk {

// A thread that called through a null or wild pointer stops with its
// instruction pointer outside executable memory, before the callee ran a single
// instruction: the return address is at the stack pointer (x86) or in the link
// register (arm64), and every callee-saved register still holds the caller's value.
class BadCallUnwinder : public Unwinder {
public:
  // The caller is the return address, accepted by the stack scan's rule (right
  // after a call): a scan of one word.
  FrameTrust trust() const override { return FrameTrust::Scan; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

// Follows the frame-pointer chain: the saved frame pointer and return address
// sit at [fp] and [fp + pointer size]. Accepts the caller only when its return
// address lies in executable memory. On arm64 an interrupted frame's caller
// is the link register first, when it follows a call (as Breakpad's).
class FramePointerUnwinder : public Unwinder {
public:
  FrameTrust trust() const override { return FrameTrust::FramePointer; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;
};

// Scans the stack upward from the frame's stack pointer for a word that points
// into an executable segment of a known module, right after a call instruction;
// where no code bytes are at hand, into code its Breakpad symbol file describes
// (BreakpadSymbolFile::describesCodeAt; within Breakpad's 40 words), other than
// a function's own address. At most maxWords words above an interrupted
// frame (160 by default, as Breakpad scans from the context frame), 320 bytes
// above one that made a call (Breakpad's 40 words of 8 bytes; 80 on 32-bit stacks).
// The caller gets its stack and instruction pointers, and on x86 (not Windows
// x64) the frame pointer the frames passed over preserved for it, when one
// points at a frame record above its stack pointer.
//
// A candidate whose code the module's own unwind data describes (`unwindData`:
// the unwinders of CFI, .ARM.exidx, function tables, symbol files' records) is
// unwound by it, through up to LookaheadFrames callers while it describes them:
// a caller it gives that cannot be one (a return address in memory that is not
// code, or after no call) refutes the candidate, which is then a stale copy of
// a return address, not the frame's caller. From a frame the scan found, a copy
// of that frame's own return address is passed over. A candidate
// at a function's first byte (by that data) must be confirmed by it: unwound,
// it must lead to a return address in a module or in code.
class StackScanUnwinder : public Unwinder {
public:
  // Breakpad's window above the context frame (4 times its kRASearchWords).
  static constexpr unsigned ContextScanWords = 160;
  explicit StackScanUnwinder(unsigned maxWords = ContextScanWords, std::vector<Unwinder *> unwindData = {})
      : maxWords_(maxWords), unwindData_(std::move(unwindData)) {}
  FrameTrust trust() const override { return FrameTrust::Scan; }
  UnwindResult unwind(const Frame &frame, const Target &target) override;

  // Whether a stack word could be a return address (also used by --scan-from).
  static bool isPlausibleReturnAddress(const Target &target, uint64_t value);

private:
  // What the unwind data of a candidate's code says of it: it is a stale copy,
  // it leads on to a return address, or nothing either way.
  enum class Verdict { Refuted, Confirmed, Silent };
  Verdict unwindDataVerdict(const RegisterFile &caller, const Target &target) const;
  // The frame's caller by the unwind data that describes its code, or nullopt.
  std::optional<RegisterFile> describedCaller(const Frame &frame, const Target &target) const;
  // Whether that unwind data says the frame's code is a signal trampoline.
  bool describesSignalTrampoline(const Frame &frame, const Target &target) const;
  // How many callers of a candidate its unwind data is followed through.
  static constexpr unsigned LookaheadFrames = 8;
  bool startsFunction(uint64_t returnAddress, const Target &target) const;

  unsigned maxWords_;
  std::vector<Unwinder *> unwindData_;
};

} // namespace stackwalk
