#include "stackwalk/unwinder/GoStackSwitchUnwinder.h"

#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/core/Registers.h"

#include <array>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <vector>

namespace stackwalk {
namespace {

// Where asmcgocall's frame on the system stack keeps the way back, as offsets
// from the stack pointer after the call to C.
struct SavedStack {
  std::optional<uint8_t> goroutine; // the g whose stack was left (switched)
  uint8_t depthOrSp = 0;            // g.stack.hi - sp when switched, else sp itself
};

// The instructions at the return address of asmcgocall's `call *%rax`:
//   switched:  mov G(%rsp),%rdi; mov 0x8(%rdi),%rsi; sub D(%rsp),%rsi
//   no switch: mov D(%rsp),%rsi; mov %rsi,%rsp
std::optional<SavedStack> savedStackAt(const Target &target, uint64_t returnAddress) {
  std::array<uint8_t, 2> call;
  std::array<uint8_t, 14> next;
  if (!target.read(returnAddress - call.size(), call) || call != std::array<uint8_t, 2>{0xff, 0xd0}) return std::nullopt;
  if (!target.read(returnAddress, next)) return std::nullopt;
  auto is = [&](size_t at, std::initializer_list<uint8_t> bytes) {
    return std::memcmp(next.data() + at, std::data(bytes), bytes.size()) == 0;
  };
  if (is(0, {0x48, 0x8b, 0x7c, 0x24}) && is(5, {0x48, 0x8b, 0x77, 0x08}) && is(9, {0x48, 0x2b, 0x74, 0x24}))
    return SavedStack{next[4], next[13]};
  if (is(0, {0x48, 0x8b, 0x74, 0x24}) && is(5, {0x48, 0x89, 0xf4})) return SavedStack{std::nullopt, next[4]};
  return std::nullopt;
}

// Without the code (a minidump walked with Breakpad symbol files), a return
// address in the function its module's symbol file names runtime.asmcgocall
// still comes from C on the system stack: Go's CFI there reads the saved
// goroutine pointer as the return address, and the way back lies at offsets
// only the code gives.
bool inAsmcgocallWithoutCode(const Frame &frame, const Target &target) {
  const Module *module = frame.module;
  uint8_t before = 0;
  if (!module || !module->symbolFile || target.read(frame.lookupAddress(), {&before, 1})) return false;
  std::vector<SourceFrame> frames = module->symbolFile->frames(frame.lookupAddress() - module->base);
  return !frames.empty() && frames.back().function == "runtime.asmcgocall";
}

} // namespace

bool GoStackSwitchUnwinder::mayHoldGoRuntime(const Module *module) {
  if (!module || !module->image) return true;
  auto [known, fresh] = goImages_.try_emplace(module->image.get(), false);
  if (fresh) known->second = module->image->section(".gopclntab").has_value();
  return known->second;
}

UnwindResult GoStackSwitchUnwinder::unwind(const Frame &frame, const Target &target) {
  if (target.arch() != Arch::X86_64 || frame.ipIsExact || !mayHoldGoRuntime(frame.module)) return UnwindResult();
  std::optional<SavedStack> saved = savedStackAt(target, frame.ip);
  if (!saved && inAsmcgocallWithoutCode(frame, target))
    return UnwindResult::cannotContinue("Go's cgo call: the goroutine's stack is found from what runtime.asmcgocall "
                                        "saved, at offsets its code gives, and the dump does not hold its code");
  if (!saved) return UnwindResult();
  auto read = [&](uint64_t address) { return target.readValue<uint64_t>(address); };
  std::optional<uint64_t> entrySp; // asmcgocall's stack pointer on entry: at its return address
  if (saved->goroutine) {
    auto g = read(frame.sp + *saved->goroutine), depth = read(frame.sp + saved->depthOrSp);
    auto lo = g ? read(*g) : std::nullopt, hi = g ? read(*g + 8) : std::nullopt;
    // The goroutine's stack is g.stack [lo, hi); the depth must lie in it.
    if (!lo || !hi || !depth || *lo >= *hi || *depth == 0 || *depth > *hi - *lo)
      return UnwindResult::noInfo("Go's cgo call: the goroutine's saved stack is not readable or not consistent");
    entrySp = *hi - *depth;
  } else {
    entrySp = read(frame.sp + saved->depthOrSp);
  }
  auto returnAddress = entrySp ? read(*entrySp) : std::nullopt;
  if (!returnAddress) return UnwindResult::noInfo("Go's cgo call: the stack it was made from is not in the dump");
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = RegisterFile(Arch::X86_64);
  result.caller.setPc(*returnAddress);
  result.caller.setSp(*entrySp + 8);
  // C preserved rbp for its caller: the goroutine's frame pointer.
  if (auto fp = frame.regs.get(frame.regs.fpRegister())) result.caller.set(frame.regs.fpRegister(), *fp);
  result.callerOnOtherStack = saved->goroutine.has_value();
  return result;
}

} // namespace stackwalk
