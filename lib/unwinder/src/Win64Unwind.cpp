#include "stackwalk/unwinder/Win64Unwind.h"

#include "CallInstruction.h"
#include "Win64UnwindInfo.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/Win64EH.h"

#include <array>
#include <vector>

using namespace llvm;
using namespace llvm::Win64EH;

namespace stackwalk {
namespace {

constexpr unsigned Rsp = 4;               // Win64 register numbers

// The register file in Win64 numbering (rax rcx rdx rbx rsp rbp rsi rdi r8..r15).
class Win64Registers {
public:
  explicit Win64Registers(const RegisterFile &regs) : regs_(regs) {}
  std::optional<uint64_t> get(unsigned n) const { return regs_.get(dwarfFromWin64Register(n)); }
  void set(unsigned n, uint64_t v) { regs_.set(dwarfFromWin64Register(n), v); }
  RegisterFile &file() { return regs_; }

private:
  RegisterFile regs_;
};

class Unwind {
public:
  // mayDeriveFrameRegister: an unknown frame register may be taken from the
  // stack pointer (deriveFrameRegister), for a frame at a call.
  Unwind(const MemorySource &memory, uint64_t imageBase, const Frame &frame, OS abi, bool mayDeriveFrameRegister)
      : memory_(memory), base_(imageBase), frame_(frame), abi_(abi), regs_(frame.regs),
        mayDerive_(mayDeriveFrameRegister) {}

  Expected<UnwindResult> run(RuntimeFunction function);
  // Whether run() took the frame register from the stack pointer.
  bool derivedFrameRegister() const { return derived_; }

private:
  Expected<UnwindInfoView> readInfo(const RuntimeFunction &function) { return readUnwindInfo(memory_, base_, function); }
  Expected<uint64_t> load(uint64_t address) {
    auto v = memory_.readValue<uint64_t>(address);
    if (!v) return fail("the stack at 0x" + Twine::utohexstr(address) + " is not in the dump");
    return *v;
  }
  Expected<uint64_t> reg(unsigned n) {
    auto v = regs_.get(n);
    if (!v) return fail("register " + Twine(n) + " is unknown");
    return *v;
  }
  Error pop(unsigned n);
  Error returnToCaller();
  Expected<uint64_t> establisherFrame(const UnwindInfoView &info, uint32_t prologOffset, bool chained);
  Expected<bool> tryEpilogV1(const UnwindInfoView &info, const RuntimeFunction &function);
  Expected<bool> tryEpilogV2(const UnwindInfoView &info, const RuntimeFunction &function);
  Error unwindEpilogV2(RuntimeFunction function, uint32_t epilogOffset);
  Error unwindPrologs(RuntimeFunction function, uint64_t frameBase);
  Error applyCode(const UnwindInfoView &info, size_t i, uint64_t frameBase);
  void deriveFrameRegister(const UnwindInfoView &info, uint32_t prologOffset);
  UnwindResult result();

  const MemorySource &memory_;
  uint64_t base_;
  const Frame &frame_;
  OS abi_; // whose calling convention says which registers survive a call
  Win64Registers regs_;
  bool machineFrame_ = false;
  bool mayDerive_;
  bool derived_ = false;
};

// How much a prolog code moved the stack pointer down.
uint64_t stackAdjustment(const UnwindInfoView &info, size_t i) {
  switch (info.op(i)) {
  case UOP_PushNonVol: return 8;
  case UOP_AllocLarge: return info.opInfo(i) ? info.slot32(i + 1) : uint64_t(info.codes[i + 1]) * 8;
  case UOP_AllocSmall: return uint64_t(info.opInfo(i)) * 8 + 8;
  default: return 0;
  }
}

Error Unwind::pop(unsigned n) {
  auto sp = reg(Rsp);
  if (!sp) return sp.takeError();
  auto v = load(*sp);
  if (!v) return v.takeError();
  regs_.set(n, *v);
  regs_.set(Rsp, *sp + 8);
  return Error::success();
}

// `ret`: the return address is at the stack pointer.
Error Unwind::returnToCaller() {
  auto sp = reg(Rsp);
  if (!sp) return sp.takeError();
  auto ra = load(*sp);
  if (!ra) return ra.takeError();
  regs_.file().setPc(*ra);
  regs_.set(Rsp, *sp + 8);
  return Error::success();
}

// The frame base that UWOP_SAVE_* offsets are relative to: the frame
// register minus its offset once the prolog has set it, else the stack pointer.
Expected<uint64_t> Unwind::establisherFrame(const UnwindInfoView &info, uint32_t prologOffset, bool chained) {
  if (info.frameRegister == 0) return reg(Rsp);
  uint64_t offset = info.frameOffset;
  bool set = chained || prologOffset >= info.prologSize;
  for (size_t i = 0; i < info.codes.size(); i += slotsOf(info.op(i), info.opInfo(i))) {
    if (info.op(i) == UOP_SetFPRegLarge) offset = info.slot32(i + 1);
    if (info.op(i) == UOP_SetFPReg || info.op(i) == UOP_SetFPRegLarge) {
      set = set || prologOffset >= info.codeOffset(i);
      break;
    }
  }
  if (!set) return reg(Rsp);
  auto fp = reg(info.frameRegister);
  if (!fp) return fp.takeError();
  return *fp - offset * 16;
}

Error Unwind::applyCode(const UnwindInfoView &info, size_t i, uint64_t frameBase) {
  uint8_t opInfo = info.opInfo(i);
  auto saveFrom = [&](uint64_t address) -> Error {
    auto v = load(address);
    if (!v) return v.takeError();
    regs_.set(opInfo, *v);
    return Error::success();
  };
  auto addSp = [&](uint64_t amount) -> Error {
    auto sp = reg(Rsp);
    if (!sp) return sp.takeError();
    regs_.set(Rsp, *sp + amount);
    return Error::success();
  };
  switch (info.op(i)) {
  case UOP_PushNonVol: return pop(opInfo);
  case UOP_AllocLarge:
  case UOP_AllocSmall: return addSp(stackAdjustment(info, i));
  case UOP_SetFPReg:
  case UOP_SetFPRegLarge: {
    auto fp = reg(info.frameRegister);
    if (!fp) return fp.takeError();
    uint64_t offset = info.op(i) == UOP_SetFPReg ? info.frameOffset : info.slot32(i + 1);
    regs_.set(Rsp, *fp - offset * 16);
    return Error::success();
  }
  case UOP_SaveNonVol: return saveFrom(frameBase + uint64_t(info.codes[i + 1]) * 8);
  case UOP_SaveNonVolBig: return saveFrom(frameBase + info.slot32(i + 1));
  case UOP_PushMachFrame: {
    // The CPU pushed SS, RSP, EFLAGS, CS, RIP (and an error code first).
    auto sp = reg(Rsp);
    if (!sp) return sp.takeError();
    uint64_t at = *sp + (opInfo ? 8 : 0);
    auto rip = load(at);
    auto rsp = load(at + 24);
    if (!rip) return rip.takeError();
    if (!rsp) return rsp.takeError();
    regs_.file().setPc(*rip);
    regs_.set(Rsp, *rsp);
    machineFrame_ = true;
    return Error::success();
  }
  default: // epilog markers, XMM saves (XMM registers are not tracked), spare codes
    return Error::success();
  }
}

Error Unwind::unwindPrologs(RuntimeFunction function, uint64_t frameBase) {
  for (unsigned depth = 0;; ++depth) {
    if (depth > ChainLimit) return fail("chained unwind info is deeper than " + Twine(ChainLimit) + " (a loop?)");
    auto info = readInfo(function);
    if (!info) return info.takeError();
    uint32_t prologOffset = uint32_t(frame_.ip - base_ - function.begin);
    for (size_t i = 0; i < info->codes.size(); i += slotsOf(info->op(i), info->opInfo(i)))
      if (prologOffset >= info->codeOffset(i))
        if (Error err = applyCode(*info, i, frameBase)) return err;
    if (!(info->flags & UNW_ChainInfo)) break;
    auto parent = chainedFunction(memory_, *info);
    if (!parent) return parent.takeError();
    function = *parent;
  }
  return machineFrame_ ? Error::success() : returnToCaller();
}

// Version 1 has no epilog codes: recognize the instructions at the pc
// (add rsp / lea rsp, pops, then ret or a jump out of the function) and
// execute them forward.
Expected<bool> Unwind::tryEpilogV1(const UnwindInfoView &info, const RuntimeFunction &function) {
  std::array<uint8_t, 64> code{};
  size_t available = code.size();
  while (available && !memory_.read(frame_.ip, {code.data(), available})) available /= 2;
  if (!available) return false;
  auto at = [&](size_t i) -> uint8_t { return i < available ? code[i] : 0; };
  auto s32 = [&](size_t i) { return int32_t(uint32_t(at(i)) | uint32_t(at(i + 1)) << 8 | uint32_t(at(i + 2)) << 16 | uint32_t(at(i + 3)) << 24); };
  size_t i = 0;
  std::optional<int64_t> addToSp;
  std::optional<std::pair<unsigned, int64_t>> leaFromFrame;
  if (at(0) == 0x48 && at(1) == 0x83 && at(2) == 0xc4) addToSp = int8_t(at(3)), i = 4;
  else if (at(0) == 0x48 && at(1) == 0x81 && at(2) == 0xc4) addToSp = s32(3), i = 7;
  else if ((at(0) & 0xfe) == 0x48 && at(1) == 0x8d) {
    unsigned reg = ((at(0) & 1) << 3) | (at(2) & 7);
    if (reg != 0 && reg == info.frameRegister) {
      if ((at(2) & 0xf8) == 0x60) leaFromFrame = {reg, int8_t(at(3))}, i = 4;
      else if ((at(2) & 0xf8) == 0xa0) leaFromFrame = {reg, s32(3)}, i = 7;
    }
  }
  std::vector<unsigned> pops;
  for (;;) {
    if ((at(i) & 0xf8) == 0x58) pops.push_back(at(i) & 7), i += 1;
    else if ((at(i) & 0xf0) == 0x40 && (at(i + 1) & 0xf8) == 0x58) pops.push_back(((at(i) & 1) << 3) | (at(i + 1) & 7)), i += 2;
    else break;
  }
  if (at(i) == 0xf2) ++i; // a REPNE prefix on the control transfer
  bool epilog = at(i) == 0xc3 || at(i) == 0xc2 || (at(i) == 0xf3 && at(i + 1) == 0xc3) ||
                (at(i) == 0xff && at(i + 1) == 0x25) ||
                ((at(i) & 0xf8) == 0x48 && at(i + 1) == 0xff && (at(i + 2) & 0x38) == 0x20);
  if (at(i) == 0xeb || at(i) == 0xe9) {
    // A jump that leaves the function (or restarts it) is a tail call.
    uint64_t next = frame_.ip + i + (at(i) == 0xeb ? 2 : 5);
    uint64_t target = next + (at(i) == 0xeb ? int64_t(int8_t(at(i + 1))) : int64_t(s32(i + 1)));
    uint64_t rva = target - base_;
    epilog = rva < function.begin || rva >= function.end || (rva == function.begin && !(info.flags & UNW_ChainInfo));
  }
  if (!epilog || i >= available) return false;
  if (addToSp) {
    auto sp = reg(Rsp);
    if (!sp) return sp.takeError();
    regs_.set(Rsp, *sp + *addToSp);
  } else if (leaFromFrame) {
    auto fp = reg(leaFromFrame->first);
    if (!fp) return fp.takeError();
    regs_.set(Rsp, *fp + leaFromFrame->second);
  }
  for (unsigned reg : pops)
    if (Error err = pop(reg)) return err;
  if (Error err = returnToCaller()) return err;
  return true;
}

// Version 2 lists its epilogs: the first UWOP_EPILOG gives their size (and
// with OpInfo bit 0, one epilog at the function's end); the next ones give
// each epilog's distance from the end (0: padding).
Expected<bool> Unwind::tryEpilogV2(const UnwindInfoView &info, const RuntimeFunction &function) {
  if (info.codes.empty() || info.op(0) != UOP_Epilog) return false;
  uint32_t size = info.codeOffset(0);
  uint32_t pc = uint32_t(frame_.ip - base_);
  std::optional<uint32_t> start;
  if ((info.opInfo(0) & 1) && pc - (function.end - size) < size) start = function.end - size;
  for (size_t i = 1; !start && i < info.codes.size() && info.op(i) == UOP_Epilog; ++i) {
    uint32_t distance = info.codeOffset(i) | uint32_t(info.opInfo(i)) << 8;
    if (distance == 0) break;
    if (pc - (function.end - distance) < size) start = function.end - distance;
  }
  if (!start) return false;
  if (Error err = unwindEpilogV2(function, pc - *start)) return err;
  return true;
}

// Inside a version 2 epilog the stack allocation is already released: undo
// the pushes the epilog has not popped yet, then return.
Error Unwind::unwindEpilogV2(RuntimeFunction function, uint32_t epilogOffset) {
  UnwindInfoView info;
  size_t first = 0;
  for (unsigned depth = 0;; ++depth) {
    if (depth > ChainLimit) return fail("chained unwind info is deeper than " + Twine(ChainLimit) + " (a loop?)");
    auto read = readInfo(function);
    if (!read) return read.takeError();
    info = std::move(*read);
    for (first = 0; first < info.codes.size(); first += slotsOf(info.op(first), info.opInfo(first)))
      if (info.op(first) == UOP_PushNonVol || info.op(first) == UOP_PushMachFrame) break;
    if (first < info.codes.size() || !(info.flags & UNW_ChainInfo)) break;
    auto parent = chainedFunction(memory_, info);
    if (!parent) return parent.takeError();
    function = *parent;
  }
  uint32_t offset = 0; // bytes of pop instructions before this one
  size_t i = first;
  for (; i < info.codes.size() && info.op(i) == UOP_PushNonVol; ++i) {
    if (offset >= epilogOffset)
      if (Error err = pop(info.opInfo(i))) return err;
    offset += info.opInfo(i) >= 8 ? 2 : 1;
  }
  if (i < info.codes.size() && info.op(i) == UOP_AllocSmall && info.opInfo(i) == 0) {
    // `pop rcx` after pushfq
    if (offset >= epilogOffset) {
      auto sp = reg(Rsp);
      if (!sp) return sp.takeError();
      regs_.set(Rsp, *sp + 8);
    }
    ++i;
  }
  if (i < info.codes.size() && info.op(i) == UOP_PushMachFrame) return applyCode(info, i, 0);
  return returnToCaller();
}

Expected<UnwindResult> Unwind::run(RuntimeFunction function) {
  auto direct = resolveIndirect(memory_, base_, function);
  if (!direct) return direct.takeError();
  function = *direct;
  auto info = readInfo(function);
  if (!info) return info.takeError();
  uint32_t prologOffset = uint32_t(frame_.ip - base_ - function.begin);
  if (mayDerive_ && !(info->flags & UNW_ChainInfo)) deriveFrameRegister(*info, prologOffset);
  auto frameBase = establisherFrame(*info, prologOffset, info->flags & UNW_ChainInfo);
  if (!frameBase) return frameBase.takeError();
  // Only an interrupted pc can be inside an epilog: a return address follows a call.
  if (frame_.ipIsExact) {
    auto inEpilog = info->version < 2 ? tryEpilogV1(*info, function) : tryEpilogV2(*info, function);
    if (!inEpilog) return inEpilog.takeError();
    if (*inEpilog) return result();
  }
  if (Error err = unwindPrologs(function, *frameBase)) return err;
  return result();
}

// A frame at a call has the stack pointer it made the call with, which in the
// function's body is the one its prolog left, unless the function moved it
// since (alloca, which needs a frame register: so this is a guess, checked by
// unwindWin64AtCall). Then the frame register held that stack pointer plus
// what the prolog allocated after setting it, plus its offset.
void Unwind::deriveFrameRegister(const UnwindInfoView &info, uint32_t prologOffset) {
  if (info.frameRegister == 0 || regs_.get(info.frameRegister)) return;
  std::optional<uint64_t> sp = regs_.get(Rsp);
  if (!sp) return;
  uint64_t atSet = *sp;
  for (size_t i = 0; i < info.codes.size(); i += slotsOf(info.op(i), info.opInfo(i))) {
    if (info.op(i) == UOP_SetFPReg || info.op(i) == UOP_SetFPRegLarge) {
      if (prologOffset < info.codeOffset(i)) return; // not set yet: not needed
      uint64_t offset = info.op(i) == UOP_SetFPReg ? info.frameOffset : info.slot32(i + 1);
      regs_.set(info.frameRegister, atSet + offset * 16);
      derived_ = true;
      return;
    }
    if (prologOffset >= info.codeOffset(i)) atSet += stackAdjustment(info, i);
  }
}

UnwindResult Unwind::result() {
  UnwindResult out;
  out.status = UnwindResult::Status::Caller;
  out.caller = RegisterFile(frame_.regs.arch());
  // Only nonvolatile registers survive a call; restored ones come from the codes.
  for (const RegisterInfo &info : frame_.regs.layout()) {
    bool keep = info.number == out.caller.pcRegister() || info.number == out.caller.spRegister() ||
                frame_.regs.isCalleeSaved(info.number, abi_);
    if (auto v = regs_.file().get(info.number); v && keep) out.caller.set(info.number, *v);
  }
  out.callerIpIsExact = machineFrame_;
  return out;
}

} // namespace

Expected<UnwindResult> unwindWin64(const MemorySource &memory, uint64_t imageBase, const RuntimeFunction &function,
                                  const Frame &frame, OS abi) {
  return Unwind(memory, imageBase, frame, abi, /*mayDeriveFrameRegister=*/false).run(function);
}

Expected<UnwindResult> unwindWin64AtCall(const Target &target, uint64_t imageBase, const RuntimeFunction &function,
                                        const Frame &frame) {
  Unwind unwind(target, imageBase, frame, OS::Windows, /*mayDeriveFrameRegister=*/!frame.ipIsExact);
  auto result = unwind.run(function);
  if (result && unwind.derivedFrameRegister() && result->caller.pc() &&
      callBefore(target, *result->caller.pc()) != CallBefore::Yes)
    return fail("with its frame register taken from the stack pointer, the return address 0x" +
                Twine::utohexstr(*result->caller.pc()) + " follows no call (the function moved its stack pointer?)");
  return result;
}

UnwindResult unwindWin64Leaf(const MemorySource &memory, const Frame &frame) {
  auto sp = frame.regs.sp();
  auto ra = sp ? memory.readValue<uint64_t>(*sp) : std::nullopt;
  if (!ra) return UnwindResult::noInfo("a leaf function's return address is not in the dump");
  UnwindResult out;
  out.status = UnwindResult::Status::Caller;
  out.caller = frame.regs.calleeSavedOnly(OS::Windows);
  out.caller.setSp(*sp + 8);
  out.caller.setPc(*ra);
  return out;
}

} // namespace stackwalk
