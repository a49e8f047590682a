#include "stackwalk/frames/RuntimeFrames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"
#include "stackwalk/core/WindowsContext.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace stackwalk::frames {
namespace {

constexpr unsigned MaxFrames = 100000;
constexpr uint64_t FrameTop = ~uint64_t(0);

// How a Frame type restores registers (StackWalk.md names the mechanisms
// after the class that implements each).
enum class Mechanism { None, InlinedCall, SoftwareException, Transition, FuncEval, Resumable, Faulting, Hijack };

Mechanism mechanismFor(const std::string &name) {
  if (name == "InlinedCallFrame") return Mechanism::InlinedCall;
  if (name == "SoftwareExceptionFrame") return Mechanism::SoftwareException;
  if (name == "FramedMethodFrame" || name == "PInvokeCalliFrame" || name == "PrestubMethodFrame" ||
      name == "StubDispatchFrame" || name == "CallCountingHelperFrame" || name == "ExternalMethodFrame" ||
      name == "DynamicHelperFrame")
    return Mechanism::Transition;
  if (name == "FuncEvalFrame") return Mechanism::FuncEval;
  if (name == "ResumableFrame" || name == "RedirectedThreadFrame") return Mechanism::Resumable;
  if (name == "FaultingExceptionFrame") return Mechanism::Faulting;
  if (name == "HijackFrame") return Mechanism::Hijack;
  return Mechanism::None;
}

// CalleeSavedRegisters' fields are named after the registers ("Rbx", "R12").
llvm::Error restoreCalleeSaved(const RuntimeData &data, uint64_t block, RegisterFile &out) {
  const DataType *type = data.descriptor().type("CalleeSavedRegisters");
  if (!type) return fail("the contract descriptor has no CalleeSavedRegisters");
  for (const auto &[field, offset] : type->fields) {
    auto reg = registerByName(out.arch(), llvm::StringRef(field).lower());
    if (!reg) continue;
    auto value = data.readPointer(block + offset, "a saved register");
    if (!value) return value.takeError();
    out.set(*reg, *value);
  }
  return llvm::Error::success();
}

// A whole Windows-layout CONTEXT saved by the runtime (the PAL's CONTEXT
// mirrors Windows' on every OS).
llvm::Expected<RegisterFile> savedContext(const RuntimeData &data, uint64_t address) {
  Arch arch = data.target().arch();
  std::vector<uint8_t> bytes(windowsContextSize(arch));
  if (bytes.empty() || !data.target().read(address, bytes))
    return fail("the CONTEXT saved at " + hex(address) + " is not in the dump");
  return fromWindowsContext(arch, bytes);
}

// Copies ip, sp and the callee-saved registers (SoftwareExceptionFrame).
RegisterFile calleeSavedOf(const RegisterFile &context, OS os) {
  RegisterFile out = context.calleeSavedOnly(os);
  if (auto pc = context.pc()) out.setPc(*pc);
  if (auto sp = context.sp()) out.setSp(*sp);
  return out;
}

llvm::Expected<std::optional<RegisterFile>> fromInlinedCall(const RuntimeData &data, uint64_t frame,
                                                             const RegisterFile &regs) {
  auto ra = data.pointer(frame, "InlinedCallFrame", "CallerReturnAddress");
  if (!ra) return ra.takeError();
  if (*ra == 0) return std::nullopt; // no active call
  auto sp = data.pointer(frame, "InlinedCallFrame", "CallSiteSP");
  if (!sp) return sp.takeError();
  auto fp = data.pointer(frame, "InlinedCallFrame", "CalleeSavedFP");
  if (!fp) return fp.takeError();
  RegisterFile out(regs.arch());
  out.setPc(*ra);
  out.setSp(*sp);
  out.set(out.fpRegister(), *fp);
  return out;
}

llvm::Expected<std::optional<RegisterFile>> fromTransition(const RuntimeData &data, uint64_t frame) {
  auto block = data.pointer(frame, "FramedMethodFrame", "TransitionBlockPtr");
  if (!block) return block.takeError();
  auto ra = data.pointer(*block, "TransitionBlock", "ReturnAddress");
  if (!ra) return ra.takeError();
  auto saved = data.offset("TransitionBlock", "CalleeSavedRegisters");
  if (!saved) return saved.takeError();
  auto size = data.size("TransitionBlock");
  if (!size) return size.takeError();
  RegisterFile out(data.target().arch());
  if (llvm::Error error = restoreCalleeSaved(data, *block + *saved, out)) return error;
  out.setPc(*ra);
  out.setSp(*block + *size);
  return out;
}

llvm::Expected<std::optional<RegisterFile>> fromHijack(const RuntimeData &data, uint64_t frame) {
  auto ra = data.pointer(frame, "HijackFrame", "ReturnAddress");
  if (!ra) return ra.takeError();
  auto args = hijackArgsAddress(data, frame);
  if (!args) return args.takeError();
  auto saved = data.offset("HijackArgs", "CalleeSavedRegisters");
  if (!saved) return saved.takeError();
  RegisterFile out(data.target().arch());
  if (llvm::Error error = restoreCalleeSaved(data, *args + *saved, out)) return error;
  out.setPc(*ra);
  if (data.hasField("HijackArgs", "Rsp")) { // Windows keeps the stack pointer
    auto sp = data.pointer(*args, "HijackArgs", "Rsp");
    if (!sp) return sp.takeError();
    out.setSp(*sp);
  } else { // elsewhere the arguments sit at the top of the hijacked frame
    auto size = data.size("HijackArgs");
    if (!size) return size.takeError();
    out.setSp(*args + *size);
  }
  return out;
}

template <typename T> llvm::Expected<std::optional<RegisterFile>> just(llvm::Expected<T> value) {
  if (!value) return value.takeError();
  return std::optional<RegisterFile>(std::move(*value));
}

// The stack pointer a FaultingExceptionFrame saved of the faulting code, or
// the largest address where it saves none. A stack overflow's handler runs on
// an alternate signal stack, above the thread's stack in memory, and builds
// its FaultingExceptionFrame there: the Frames after it lie on the thread's
// stack, above the faulting stack pointer, and below the Frame itself.
uint64_t faultingStackPointer(const RuntimeData &data, const RuntimeFrame &frame) {
  if (mechanismFor(frame.name) != Mechanism::Faulting) return UINT64_MAX;
  auto context = contextFromFrame(data, frame, RegisterFile(data.target().arch()), data.target().os());
  if (!context) return llvm::consumeError(context.takeError()), UINT64_MAX;
  return *context && (*context)->sp() ? *(*context)->sp() : UINT64_MAX;
}

} // namespace

FrameChain readFrameChain(const RuntimeData &data, uint64_t first) {
  FrameChain chain;
  std::set<uint64_t> seen;
  uint64_t address = first;
  uint64_t floor = 0; // each Frame lies above this: the one before it, on its stack
  for (unsigned i = 0; address && address != FrameTop; ++i) {
    if (i == MaxFrames) {
      chain.problem = "the Frame chain is longer than " + std::to_string(MaxFrames) + " Frames";
      break;
    }
    if (!seen.insert(address).second) {
      chain.problem = "the Frame chain loops at " + hex(address);
      break;
    }
    if (!chain.frames.empty() && address <= floor) {
      chain.problem = "the Frame at " + hex(address) + " is not above the one before it on the stack";
      break;
    }
    auto identifier = data.readPointer(address, "a Frame's identifier");
    if (!identifier) {
      chain.problem = llvm::toString(identifier.takeError());
      break;
    }
    RuntimeFrame frame{address, *identifier, ""};
    if (auto global = data.descriptor().globalNamed(*identifier, "Identifier"))
      frame.name = global->substr(0, global->size() - std::string_view("Identifier").size());
    chain.frames.push_back(frame);
    floor = std::min(address, faultingStackPointer(data, frame));
    auto next = data.pointer(address, "Frame", "Next");
    if (!next) {
      chain.problem = llvm::toString(next.takeError());
      break;
    }
    address = *next;
  }
  return chain;
}

bool isHijackFrame(const RuntimeFrame &frame) { return mechanismFor(frame.name) == Mechanism::Hijack; }

llvm::Expected<uint64_t> hijackArgsAddress(const RuntimeData &data, uint64_t frame) {
  return data.pointer(frame, "HijackFrame", "HijackArgsPtr");
}

llvm::Expected<std::optional<RegisterFile>> contextFromFrame(const RuntimeData &data, const RuntimeFrame &frame,
                                                             const RegisterFile &regs, OS os) {
  switch (mechanismFor(frame.name)) {
  case Mechanism::None:
    return std::nullopt;
  case Mechanism::InlinedCall:
    return fromInlinedCall(data, frame.address, regs);
  case Mechanism::SoftwareException: {
    auto at = data.offset("SoftwareExceptionFrame", "TargetContext");
    if (!at) return at.takeError();
    auto context = savedContext(data, frame.address + *at);
    if (!context) return context.takeError();
    return calleeSavedOf(*context, os);
  }
  case Mechanism::Transition:
    return fromTransition(data, frame.address);
  case Mechanism::FuncEval: {
    auto eval = data.pointer(frame.address, "FuncEvalFrame", "DebuggerEvalPtr");
    if (!eval) return eval.takeError();
    auto at = data.offset("DebuggerEval", "TargetContext");
    if (!at) return at.takeError();
    return just(savedContext(data, *eval + *at));
  }
  case Mechanism::Resumable: {
    auto context = data.pointer(frame.address, "ResumableFrame", "TargetContextPtr");
    if (!context) return context.takeError();
    return just(savedContext(data, *context));
  }
  case Mechanism::Faulting: {
    auto at = data.offset("FaultingExceptionFrame", "TargetContext");
    if (!at) return at.takeError();
    return just(savedContext(data, frame.address + *at));
  }
  case Mechanism::Hijack:
    return fromHijack(data, frame.address);
  }
  return std::nullopt;
}

namespace {

// InlinedCallFrame.Datum's offset. Descriptors before .NET 11 do not describe
// it, but frames.h declares it as InlinedCallFrame's only field between
// Frame's m_Next and m_pCallSiteSP: when the descriptor leaves exactly one
// pointer between those two, that slot is Datum.
std::optional<uint32_t> inlinedCallDatumOffset(const RuntimeData &data) {
  if (auto described = data.descriptor().fieldOffset("InlinedCallFrame", "Datum")) return described;
  auto next = data.descriptor().fieldOffset("Frame", "Next");
  auto callSite = data.descriptor().fieldOffset("InlinedCallFrame", "CallSiteSP");
  unsigned pointer = data.pointerSize();
  if (next && callSite && *callSite == *next + 2 * pointer) return *next + pointer;
  return std::nullopt;
}

// StackWalk.md's InlinedCallFrameHasActiveCall and InlinedCallFrameHasFunction:
// only a Frame with an active call (a return address set) has a function; on
// 64-bit targets a Datum that is a small number (an argument size) is none,
// on 32-bit ones the MethodDesc is tagged with bit 0.
uint64_t inlinedCallMethodDesc(const RuntimeData &data, const RuntimeFrame &frame) {
  auto offset = inlinedCallDatumOffset(data);
  if (!offset) return 0;
  auto datum = data.readPointer(frame.address + *offset, "InlinedCallFrame.Datum");
  if (!datum) return llvm::consumeError(datum.takeError()), 0;
  auto returnAddress = data.pointer(frame.address, "InlinedCallFrame", "CallerReturnAddress");
  if (!returnAddress) return llvm::consumeError(returnAddress.takeError()), 0;
  bool function = data.pointerSize() == 8 ? (*datum & ~uint64_t(0xffff)) != 0 : *datum != 0 && (*datum & 1);
  if (*returnAddress == 0 || !function) return 0;
  return *datum & ~uint64_t(data.pointerSize() - 1);
}

} // namespace

uint64_t frameMethodDesc(const RuntimeData &data, const RuntimeFrame &frame) {
  // The fields StackWalk.md reads (FramedMethodFrame.MethodDescPtr,
  // InlinedCallFrame.Datum, ...) are used where the descriptor has them.
  Mechanism mechanism = mechanismFor(frame.name);
  if (mechanism == Mechanism::InlinedCall) return inlinedCallMethodDesc(data, frame);
  const char *type = nullptr, *field = nullptr;
  if (mechanism == Mechanism::Transition && frame.name != "PInvokeCalliFrame") type = "FramedMethodFrame", field = "MethodDescPtr";
  if (frame.name == "StubDispatchFrame") type = "StubDispatchFrame", field = "MethodDescPtr";
  if (!type || !data.hasField(type, field)) return 0;
  auto value = data.pointer(frame.address, type, field);
  if (!value) {
    llvm::consumeError(value.takeError());
    return 0;
  }
  return *value;
}

} // namespace stackwalk::frames
