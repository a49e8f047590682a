#include "stackwalk/unwinder/FallbackUnwinders.h"

#include "Arm64Reachability.h"
#include "CallInstruction.h"
#include "FunctionStart.h"

#include "stackwalk/core/Auxv.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

namespace stackwalk {

namespace {

// The register a frame record's address is in: on ARM, r7 in Thumb code,
// but r11 on Windows, whose code is all Thumb-2 and keeps r11 (its ABI).
unsigned framePointerRegister(const RegisterFile &regs, OS os) {
  if (regs.arch() != Arch::Arm) return regs.fpRegister();
  return os == OS::Windows ? 11 : armFramePointerRegister(regs);
}

// A stack's words, read a page at a time: a scan may try 160 words, and one read per page
// instead of one per word is what keeps a dump of 100,000 threads cheap to scan. A page the
// dump holds only part of (a minidump's stack range need not end on a page boundary) is read
// word by word. Words are little-endian, as every architecture stackwalk reads.
class PagedStackReader {
public:
  PagedStackReader(const Target &target, unsigned size) : target_(target), size_(size) {}

  std::optional<uint64_t> at(uint64_t address) {
    uint64_t page = address & ~(PageBytes - 1);
    if (page != page_) {
      page_ = page;
      wholePage_ = target_.read(page, bytes_);
    }
    uint64_t offset = address - page;
    if (!wholePage_ || offset + size_ > PageBytes) return target_.readPointer(address, size_);
    uint64_t value = 0;
    std::memcpy(&value, bytes_.data() + offset, size_);
    return value;
  }

private:
  static constexpr uint64_t PageBytes = 4096;
  const Target &target_;
  unsigned size_;
  std::optional<uint64_t> page_;
  bool wholePage_ = false;
  std::array<uint8_t, PageBytes> bytes_;
};

// What speaks for a stack word being a return address. CodeAbsent is none:
// the word points into a module's code, but neither the dump nor a file holds
// that code to show a call before it (counted, to say so when the scan ends).
enum class Evidence { None, CodeAbsent, CallInstruction, SymbolFileFunction, EntryFunctionCall };

bool speaksForReturn(Evidence evidence) { return evidence != Evidence::None && evidence != Evidence::CodeAbsent; }

// The process's entry point as code (auxv's AT_ENTRY, without ARM's Thumb bit).
std::optional<uint64_t> entryPoint(const Target &target) {
  std::optional<uint64_t> entry = auxvValue(target.process.auxv, AT_ENTRY);
  return entry ? std::optional(target.codeAddress(*entry)) : std::nullopt;
}

// How far into the entry function (_start) its call returns: glibc's calls
// __libc_start_main 0x25-0x2a bytes in on x86-64 (0x29 in Breakpad's Linux
// dumps), 0x30 on arm64; musl's calls _start_c sooner.
constexpr uint64_t EntryCallReach = 64;

// Whether `code` lies just past the process's entry point, where the entry
// function's call returns. The entry function is never returned to, so a
// pointer into it is that call's return address (or a copy of it): nothing
// else points a few bytes into _start. Evidence where no code is at hand.
bool followsEntryPoint(const Target &target, uint64_t code) {
  std::optional<uint64_t> entry = entryPoint(target);
  return entry && code > *entry && code - *entry <= EntryCallReach;
}

// `value` as the stack or a register holds it: with arm64's pointer
// authentication bits or ARM's Thumb bit, which say how to read the call.
Evidence returnAddressEvidence(const Target &target, uint64_t value) {
  uint64_t code = target.codeAddress(value);
  const Module *module = target.moduleAt(code);
  // The call lies before the return address, in the same module: a module's
  // first byte (a word holding its load address) follows no call of its own.
  if (!module || code <= module->base || !target.isExecutable(code)) return Evidence::None;
  switch (callBefore(target, value)) {
  case CallBefore::Yes: return Evidence::CallInstruction;
  case CallBefore::No: return Evidence::None;
  case CallBefore::Unknown: break;
  }
  // Neither the dump nor a file holds the code: code that a symbol file
  // describes where the call is, is the evidence left (Breakpad's rule with
  // symbols, without its trust in a PUBLIC symbol's unbounded extent), or the
  // entry function's call (the walks of Breakpad's Linux dumps, which mostly
  // hold no code, end at _start so, as minidump_stackwalk's do). A word
  // equal to a function's own address is a pointer to it far more often than
  // the return of a call ending the function before (Sentry's windows.dmp: the
  // thread's start routine, above its outermost frame); only the code could
  // tell, and it is not at hand.
  const BreakpadSymbolFile *symbols = module->symbolFile.get();
  if (symbols && symbols->describesCodeAt(code - 1 - module->base) && !symbols->startsFunctionAt(code - module->base))
    return Evidence::SymbolFileFunction;
  return followsEntryPoint(target, code) ? Evidence::EntryFunctionCall : Evidence::CodeAbsent;
}

// Evidence of where a word points, not of a call before it: trusted near the
// frame only (NoCallScanWords).
bool showsNoCall(Evidence evidence) {
  return evidence == Evidence::SymbolFileFunction || evidence == Evidence::EntryFunctionCall;
}

// How far the scan trusts a symbol file's functions or the entry point alone:
// Breakpad's window (kRASearchWords). A word far up the stack that merely lies
// in some function is more likely a stale value than the caller.
constexpr unsigned NoCallScanWords = 40;
// How far a scan goes above a frame that made a call (not an interrupted one):
// such a frame's own locals lie between its stack pointer and its return
// address. Breakpad's window (kRASearchWords: 40 words; 4 times as many from
// the context frame, StackScanUnwinder's default), in bytes: 320, which is 80
// words of a 32-bit stack, whose frames hold as many bytes as 64-bit ones (on
// the i386 cores walked without their libraries, main's return address lay
// 67 words above the frame libc's vDSO call returned to, past 40; 80 words
// found 48 more of their 691 frames and no false one, and changed no walk of
// the corpus's minidumps). Farther up, stale words are likelier
// than frames: above the outermost frame of a thread whose entry code has no
// unwind data (ARM's clone), the thread's own record holds its start
// function's address, which follows the last call of the function before it;
// on the project's Windows x64 dumps walked without their images (no .pdata),
// stale return addresses lay 120-339 words above the frames they would have
// followed (breakpad_symbols_test), where 128 and 512 words took them.
constexpr unsigned CallerScanBytes = 320;

// Why a frame record's return address is none, or null.
const char *recordReturnAddressProblem(const Target &target, uint64_t returnAddress) {
  uint64_t code = target.codeAddress(returnAddress);
  if (!target.isExecutable(code)) return "the frame record's return address is not in executable memory";
  const Module *module = target.moduleAt(code);
  // A module's first byte, its headers' start, follows no call in it: a word
  // holding the load address (zstd's armhf main thread: -O2 Thumb code keeps
  // other values in r7, which read as a record gave the ELF header).
  if (module && code <= module->base) return "the frame record's return address is its module's first byte";
  // A module's symbol file describes its code: a return address outside it is
  // no return address (Breakpad's InstructionAddressSeemsValid).
  if (module && module->symbolFile && !module->symbolFile->describesCodeAt(code - 1 - module->base))
    return "the frame record's return address is in no code its symbol file describes";
  return nullptr;
}

// How many records above one whose return address the dump does not place
// the chain may pass (Java's interpreter frames, each a record) before it
// returns into a module.
constexpr unsigned MaxUnplacedRecords = 64;

// Whether the records from `record` on, each higher on the stack than the one
// before (`below`), lead to a return address in a module that the frame-pointer
// unwinder would take and that could follow a call, passing only return
// addresses the dump does not place (JIT code, in a dump without mappings):
// the evidence that a record's unplaced return address is a frame's, which a
// value the frame-pointer register held for another purpose does not give.
bool chainReturnsToModule(const Target &target, uint64_t record, uint64_t below) {
  unsigned size = pointerSize(target.arch());
  for (unsigned i = 0; i < MaxUnplacedRecords; ++i) {
    if (record <= below || record % size != 0) return false;
    auto savedFp = target.readPointer(record, size);
    auto returnAddress = target.readPointer(record + size, size);
    if (!savedFp || !returnAddress) return false;
    uint64_t code = target.codeAddress(*returnAddress);
    if (target.moduleAt(code))
      return !recordReturnAddressProblem(target, *returnAddress) && callBefore(target, *returnAddress) != CallBefore::No;
    if (!target.mayBeUnplacedCode(code)) return false;
    below = record;
    record = *savedFp;
  }
  return false;
}

// Where code that keeps a frame pointer pushes its record on entry, at the top of
// its frame: x86, but not Windows x64, whose ABI keeps no chain (a function's
// frame register, if any, points anywhere in its frame).
bool pushesFrameRecords(const Target &target) {
  return target.arch() == Arch::X86 || (target.arch() == Arch::X86_64 && target.os() != OS::Windows);
}

// The most a scanned caller's frame pointer may lie above its stack pointer:
// the frame's locals and spilled arguments (a -O0 frame's, say), not another
// frame's record far up the stack.
constexpr uint64_t MaxFrameRecordDistance = 64 * 1024;

// Whether `fp` could be the frame pointer of a frame whose stack pointer is
// `sp`, on x86, whose record (saved frame pointer, return address) is pushed
// at the frame's top: at or above sp, its return address one that the
// frame-pointer unwinder would follow and not after anything but a call. The
// saved frame pointer is not checked: a caller that keeps none (glibc's
// start_thread) left any value there.
bool isFrameRecordAbove(const Target &target, PagedStackReader &words, uint64_t fp, uint64_t sp) {
  unsigned size = pointerSize(target.arch());
  if (fp < sp || fp - sp > MaxFrameRecordDistance || fp % size != 0) return false;
  auto returnAddress = words.at(fp + size);
  return returnAddress && !recordReturnAddressProblem(target, *returnAddress) &&
         callBefore(target, *returnAddress) != CallBefore::No;
}

// The most a function realigns its stack by: x86 code aligns it for AVX-512
// data at most (64 bytes).
constexpr uint64_t MaxRealignment = 64;
// How many words below its frame record a realigning function saves the
// register holding its caller's stack pointer (after the callee-saved ones).
constexpr uint64_t MaxSavedRegisterWords = 8;

// Where the caller's stack pointer lies above a frame record at `fp` on x86:
// just past the record, except above a function that realigned its stack on
// entry by GCC's "DRAP" sequence (i386 main; any function with over-aligned
// locals): `lea ecx, [esp+4]; and esp, -16; push [ecx-4]; push ebp; mov ebp,
// esp; ... push ecx`. Its record holds a copy of the return address, and the
// caller's stack pointer lies past the original, up to the alignment less a
// word above the record; the function saved that stack pointer (ecx, r10) just
// below the record. Both words must be there: the original equal to the copy,
// and a saved register equal to the stack pointer past it. gdb has the
// function's DWARF expressions for this; a Breakpad symbol file cannot hold
// them, and Breakpad's walk past an i386 main goes wrong without it.
uint64_t callerSpAboveRecord(const Target &target, uint64_t fp, uint64_t returnAddress) {
  unsigned size = pointerSize(target.arch());
  uint64_t pastRecord = fp + 2 * size;
  if (!pushesFrameRecords(target)) return pastRecord;
  for (uint64_t slot = pastRecord; slot < pastRecord + MaxRealignment; slot += size) {
    if (target.readPointer(slot, size) != returnAddress) continue;
    for (uint64_t saved = 1; saved <= MaxSavedRegisterWords && saved * size <= fp; ++saved)
      if (target.readPointer(fp - saved * size, size) == slot + size) return slot + size;
  }
  return pastRecord;
}

// A scanned caller's frame pointer, which its code may need to find its own
// caller (a -O0 function's CFI: CFA = ebp + 8). The frames the scan passed over
// preserved it (x86's frame pointer is callee-saved): either they left it in the
// register, or one of them pushed it between the stack pointer and the return
// address found. The register is tried first, then those words from the return
// address down (a function pushes it on entry, so the outermost frame passed over,
// the one the caller called, saved the caller's own value); the first that
// points at a frame record above the caller's stack pointer is taken. Breakpad and
// rust-minidump try the register and the word below the return address.
std::optional<uint64_t> scannedCallerFramePointer(const Frame &frame, const Target &target,
                                                  PagedStackReader &words, uint64_t returnSlot) {
  unsigned size = pointerSize(target.arch());
  uint64_t callerSp = returnSlot + size;
  std::optional<uint64_t> inRegister = frame.regs.get(frame.regs.fpRegister());
  if (inRegister && isFrameRecordAbove(target, words, *inRegister, callerSp)) return inRegister;
  for (uint64_t slot = returnSlot; slot > frame.sp;) {
    slot -= size;
    auto value = words.at(slot);
    if (value && isFrameRecordAbove(target, words, *value, callerSp)) return value;
  }
  return std::nullopt;
}

// Whether `value` is the dead return address of a call of i386's get-pc thunk
// (pcThunkCalledBefore): live only while the frame is in the thunk itself,
// which calls nothing (perl's and zstd's i386 programs walked without libc's
// file: Perl_cast_iv+0x5 above __select's frame, taken before the true caller).
bool leftByPcThunk(const Frame &frame, const Target &target, uint64_t value) {
  std::optional<uint64_t> thunk = pcThunkCalledBefore(target, value);
  return thunk && !(frame.ip >= *thunk && frame.ip < *thunk + PcThunkSize);
}

// Whether a value read where unwind data puts a frame's return address shows
// the frame to be a stale copy: a pointer to data the dump maps, or to code
// that follows no call, is another frame's live value in that slot. A value
// that points nowhere says nothing: a frame whose return address was
// overwritten (a smashed stack; smashed-stack's smash_and_block, blocked in
// read) still made the call the scan found. Nor does code that is not at hand.
bool showsStaleFrame(const Target &target, uint64_t returnAddress) {
  uint64_t code = target.codeAddress(returnAddress);
  if (const MemoryRegion *region = target.regionAt(code); region && !region->executable) return true;
  return callBefore(target, returnAddress) == CallBefore::No;
}

} // namespace

// The scan's candidate as the walk would make its frame, unwound by the unwind
// data that describes its code, if any: on ARM, above a frame that no table
// describes (_Unwind_RaiseException, EXIDX_CANTUNWIND), two copies of a return
// address that libgcc's unwinder had written there were taken before the true caller.
StackScanUnwinder::Verdict StackScanUnwinder::unwindDataVerdict(const RegisterFile &caller,
                                                                const Target &target) const {
  RegisterFile regs = caller;
  takeReturnAddress(target, regs);
  Frame frame = frameOf(target, regs, FrameTrust::Scan, /*ipIsExact=*/false);
  Verdict verdict = Verdict::Silent;
  for (unsigned step = 0; step < LookaheadFrames; ++step) {
    std::optional<RegisterFile> next = describedCaller(frame, target);
    std::optional<uint64_t> pc = next ? next->pc() : std::nullopt;
    std::optional<uint64_t> sp = next ? next->sp() : std::nullopt;
    if (!pc || *pc == 0 || !sp || *sp <= frame.sp) return verdict; // the outermost frame, or a value read as none
    RegisterFile callerRegs = *next;
    takeReturnAddress(target, callerRegs);
    Frame caller = frameOf(target, callerRegs, FrameTrust::Scan, /*ipIsExact=*/false);
    // A handler returns into the signal trampoline, whose address the kernel
    // pushed: no call comes before it, and a chain that reaches it is a true
    // one (i386's vDSO __kernel_sigreturn, above a handler blocked in libc
    // walked without libc's file, had refuted the handler's true caller).
    if (describesSignalTrampoline(caller, target)) return Verdict::Confirmed;
    if (showsStaleFrame(target, *pc)) return Verdict::Refuted;
    uint64_t code = target.codeAddress(*pc);
    if (!target.moduleAt(code) && !target.isExecutable(code)) return verdict;
    verdict = Verdict::Confirmed;
    frame = caller;
  }
  return verdict;
}

bool StackScanUnwinder::describesSignalTrampoline(const Frame &frame, const Target &target) const {
  return std::any_of(unwindData_.begin(), unwindData_.end(),
                     [&](Unwinder *unwinder) { return unwinder->isSignalTrampoline(frame, target); });
}

std::optional<RegisterFile> StackScanUnwinder::describedCaller(const Frame &frame, const Target &target) const {
  for (Unwinder *unwinder : unwindData_) {
    UnwindResult result = unwinder->unwind(frame, target);
    if (result.status == UnwindResult::Status::NoInfo) continue;
    if (result.status != UnwindResult::Status::Caller || result.callerIpIsExact) return std::nullopt;
    return result.caller;
  }
  return std::nullopt;
}

// A function's first byte follows a call only where the function before ends
// with a call that does not return (abort, _Unwind_Resume): a word equal to it
// is far more often the function's address (main's, which __libc_start_main
// keeps, in stripped Debian programs walked without libc, after a cold fragment
// that calls abort; the entry point's, in Breakpad's
// linux_inside_module_exe_region1.dmp, after one that calls __assert_fail). It
// is taken only when its unwind data leads on to a return address in a module
// or code, as a frame that made that call would.
bool StackScanUnwinder::startsFunction(uint64_t returnAddress, const Target &target) const {
  uint64_t code = target.codeAddress(returnAddress);
  if (entryPoint(target) == code) return true;
  return std::any_of(unwindData_.begin(), unwindData_.end(),
                     [&](Unwinder *unwinder) { return unwinder->startsFunctionAt(code, target); });
}

bool StackScanUnwinder::isPlausibleReturnAddress(const Target &target, uint64_t value) {
  return speaksForReturn(returnAddressEvidence(target, value));
}

UnwindResult BadCallUnwinder::unwind(const Frame &frame, const Target &target) {
  if (frame.trust != FrameTrust::Context || target.isExecutable(frame.ip))
    return UnwindResult::noInfo(""); // not a call through a bad pointer
  // The call left its return address in the link register (arm64) or pushed it.
  std::optional<unsigned> linkRegister = frame.regs.linkRegister();
  unsigned size = pointerSize(target.arch());
  auto returnAddress = linkRegister ? frame.regs.get(*linkRegister) : target.readPointer(frame.sp, size);
  if (!returnAddress || !StackScanUnwinder::isPlausibleReturnAddress(target, *returnAddress))
    return UnwindResult::noInfo(linkRegister ? "no return address in the link register"
                                             : "no return address at the stack pointer");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = frame.regs.calleeSavedOnly(target.os());
  result.caller.setSp(linkRegister ? frame.sp : frame.sp + size);
  result.caller.setPc(*returnAddress);
  return result;
}

// Whether the frame's function has pushed its frame record since it was
// called: the record the frame pointer points at, at or above the stack
// pointer, holds lr as its return address. Then that record is the frame's
// own, the way to its caller, and not its caller's (AAPCS64's `stp x29, x30,
// [sp, #-N]!; mov x29, sp`: glibc's read and select blocked in their system
// call, walked without libc's file, where taking lr as a leaf's gave the
// caller twice, then stale frames). A leaf's frame pointer is its caller's,
// whose record holds the caller's own return address, not lr.
static bool pushedOwnRecord(const Frame &frame, const Target &target, uint64_t lr) {
  unsigned size = pointerSize(target.arch());
  std::optional<uint64_t> fp = frame.regs.get(framePointerRegister(frame.regs, target.os()));
  if (!fp || *fp < frame.sp) return false;
  std::optional<uint64_t> saved = target.readPointer(*fp + size, size);
  return saved && target.codeAddress(*saved) == target.codeAddress(lr);
}

// Whether lr is a return into the interrupted function itself, at or before
// its pc: the return from a call the function made after its prolog had saved
// its own return address (a function without unwind info that has called
// strlen), not its caller. A recursive function's callee interrupted in its
// prolog (a stack overflow) has lr past its pc, and its caller is lr.
static bool returnsIntoItself(const Frame &frame, const Target &target, uint64_t lrCode) {
  if (lrCode > target.codeAddress(frame.ip)) return false;
  std::optional<uint64_t> start = functionStart(target, lrCode);
  return start && start == functionStart(target, target.codeAddress(frame.ip));
}

// Whether lr follows a `bl` whose callee's code cannot lead to the frame's pc
// (Arm64Reachability.h): lr is then the return from a call the frame made and
// that has returned, where no symbol tells the function (stripped busybox).
static bool callLeadsElsewhere(const Frame &frame, const Target &target, uint64_t lr) {
  if (target.arch() != Arch::Arm64) return false;
  std::optional<uint64_t> callee = arm64DirectCallTarget(target, lr);
  return callee && arm64MayReach(target, *callee, target.codeAddress(frame.ip)) == false;
}

// An interrupted frame on a link-register architecture (arm64): a function
// saves lr in its frame record only in its prolog, so in a leaf (or before
// its prolog) lr is the return address and fp still its caller's record.
// Without unwind info nothing tells a leaf from a function that has called
// others since (whose lr is stale); Breakpad and rust-minidump take lr for the
// context frame, and so does this, when lr is module code that follows a call
// (or whose code the dump does not hold), does not return into the function
// itself, and follows no call whose callee cannot lead to the frame's pc.
static std::optional<UnwindResult> linkRegisterCaller(const Frame &frame, const Target &target) {
  std::optional<unsigned> link = frame.regs.linkRegister();
  if (!frame.ipIsExact || !link) return std::nullopt;
  std::optional<uint64_t> lr = frame.regs.get(*link);
  if (!lr || pushedOwnRecord(frame, target, *lr)) return std::nullopt;
  // Code that can be read must show the call; a dump without code bytes is taken at its word.
  // lr equal to pc is the context of the function that recorded it, no caller: compared as
  // code, since a context's pc may keep ARM's Thumb bit (Breakpad's ARM microdumps).
  uint64_t returnAddress = *lr, code = target.codeAddress(returnAddress);
  if (code == target.codeAddress(frame.ip) || !target.moduleAt(code) || !target.isExecutable(code) ||
      callBefore(target, returnAddress) == CallBefore::No || returnsIntoItself(frame, target, code) ||
      callLeadsElsewhere(frame, target, returnAddress))
    return std::nullopt;
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(frame.regs.arch());
  unsigned fpRegister = framePointerRegister(frame.regs, target.os());
  if (auto fp = frame.regs.get(fpRegister)) result.caller.set(fpRegister, *fp);
  result.caller.setSp(frame.sp);
  result.caller.setPc(returnAddress);
  return result;
}

UnwindResult FramePointerUnwinder::unwind(const Frame &frame, const Target &target) {
  if (auto leaf = linkRegisterCaller(frame, target)) return *leaf;
  unsigned fpRegister = framePointerRegister(frame.regs, target.os());
  std::optional<uint64_t> fp = frame.regs.get(fpRegister);
  unsigned size = pointerSize(target.arch());
  if (!fp) return UnwindResult::noInfo("the frame pointer is unknown");
  std::optional<uint64_t> stackEnd = target.stackEnd(frame.sp);
  if (*fp < frame.sp || *fp % size != 0 || (stackEnd && (*fp >= *stackEnd || *stackEnd - *fp < 2 * size)))
    return UnwindResult::noInfo("the frame pointer does not point into the stack");
  auto savedFp = target.readPointer(*fp, size);
  auto returnAddress = target.readPointer(*fp + size, size);
  if (!savedFp || !returnAddress) return UnwindResult::noInfo("the frame record is not in the dump");
  // A zero return address ends the chain, not necessarily the stack: code
  // that keeps no frame pointer leaves one behind by chance, so the scan is tried.
  if (*returnAddress == 0) return UnwindResult::noInfo("the frame-pointer chain ends");
  if (const char *problem = recordReturnAddressProblem(target, *returnAddress))
    if (!target.mayBeUnplacedCode(target.codeAddress(*returnAddress)) || !chainReturnsToModule(target, *savedFp, *fp))
      return UnwindResult::noInfo(problem);
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(frame.regs.arch());
  result.caller.set(fpRegister, *savedFp);
  // x86's record is pushed at the top of its frame (push rbp at entry), so
  // the caller's stack pointer lies just past it (or past a realigned frame's
  // return address); a link-register architecture's record may lie anywhere in its frame.
  result.caller.setSp(callerSpAboveRecord(target, *fp, *returnAddress));
  result.callerSpIsLowerBound = frame.regs.linkRegister().has_value();
  result.caller.setPc(*returnAddress);
  return result;
}

UnwindResult StackScanUnwinder::unwind(const Frame &frame, const Target &target) {
  unsigned size = pointerSize(target.arch());
  PagedStackReader words(target, size);
  unsigned maxWords = frame.ipIsExact ? maxWords_ : std::min(maxWords_, CallerScanBytes / size);
  unsigned unverifiable = 0; // words into modules whose code is not at hand
  unsigned i = 0;
  for (; i < maxWords; ++i) {
    uint64_t slot = frame.sp + uint64_t(i) * size;
    auto value = words.at(slot);
    if (!value) break;
    // An interrupted frame's stack keeps copies of its pc (the exception record and
    // context the system saved there), and a frame the scan found may have a copy of
    // its return address beside it (libgcc's unwinder leaves one on ARM): the same
    // address is no caller's return address.
    if ((frame.ipIsExact || frame.trust == FrameTrust::Scan) &&
        target.codeAddress(*value) == target.codeAddress(frame.ip))
      continue;
    Evidence evidence = returnAddressEvidence(target, *value);
    unverifiable += evidence == Evidence::CodeAbsent;
    if (!speaksForReturn(evidence) || (showsNoCall(evidence) && i >= NoCallScanWords)) continue;
    if (leftByPcThunk(frame, target, *value)) continue;
    UnwindResult result;
    result.status = UnwindResult::Status::Caller;
    result.caller = RegisterFile(frame.regs.arch());
    result.caller.setSp(slot + size);
    result.caller.setPc(*value);
    if (pushesFrameRecords(target))
      if (auto fp = scannedCallerFramePointer(frame, target, words, slot))
        result.caller.set(frame.regs.fpRegister(), *fp);
    Verdict verdict = unwindDataVerdict(result.caller, target);
    if (verdict == Verdict::Refuted || (verdict != Verdict::Confirmed && startsFunction(*value, target))) continue;
    return result;
  }
  // Where the scan stopped, and what a user can do about the words it could
  // not check: give the walk the modules' files (or a symbol server that has
  // them), which hold the code.
  std::string why = i == maxWords ? "no return address found in the " + std::to_string(maxWords) +
                                        " stack words the scan reads above the frame"
                                  : "no return address found by scanning the stack";
  if (unverifiable)
    why += ": " + std::to_string(unverifiable) +
           " word(s) point into modules whose code neither the dump nor a file holds, so nothing shows a call "
           "before them";
  return UnwindResult::noInfo(why);
}

} // namespace stackwalk
