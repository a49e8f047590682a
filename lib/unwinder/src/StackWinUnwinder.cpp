#include "stackwalk/unwinder/StackWinUnwinder.h"

#include "CallInstruction.h"
#include "PostfixExpression.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"

#include <algorithm>

namespace stackwalk {
namespace {

using FrameInfo = WindowsFrameInfo;

constexpr unsigned Word = 4;
// Breakpad's bounds: three words above the computed return-address slot for
// a stack the prolog aligned; 40 words (160 for the context frame, whose
// callee state is least known) when that slot holds no return address.
constexpr unsigned AlignmentWords = 3;
constexpr unsigned SearchWords = 40, ContextSearchWords = 160;
// The saved-register area searched for ebp, at most: far more than the
// registers a prolog saves, and a bound on a record that claims gigabytes.
constexpr uint64_t SavedEbpSearchWords = 256;

// X86 DWARF numbers, as RegisterFile keeps them.
constexpr unsigned Ebx = 3, Esi = 6, Edi = 7;

struct Found {
  uint64_t slot, returnAddress;
};

// The first slot from `start` up to `words` words above it that holds a
// return address, as `isReturnAddress` judges one.
template <class IsReturnAddress>
std::optional<Found> scanForReturnAddress(const Target &target, uint64_t start, unsigned words,
                                          IsReturnAddress isReturnAddress) {
  for (unsigned i = 0; i <= words; ++i) {
    uint64_t slot = start + uint64_t(i) * Word;
    std::optional<uint64_t> value = target.readPointer(slot, Word);
    if (!value) break;
    if (isReturnAddress(*value)) return Found{slot, *value};
  }
  return std::nullopt;
}

// The variables a program may read: the callee's registers that are known,
// and the record's sizes.
PostfixVariables programInputs(const Frame &frame, const FrameInfo &info, uint64_t raSearchStart) {
  PostfixVariables inputs;
  for (auto [reg, name] : {std::pair{frame.regs.spRegister(), "$esp"}, std::pair{frame.regs.fpRegister(), "$ebp"},
                           std::pair{Ebx, "$ebx"}, std::pair{Esi, "$esi"}, std::pair{Edi, "$edi"}})
    if (std::optional<uint64_t> value = frame.regs.get(reg)) inputs[name] = *value;
  inputs[".cbCalleeParams"] = frame.calleeArgumentBytes;
  inputs[".cbSavedRegs"] = info.savedRegisterSize;
  inputs[".cbLocals"] = info.localSize;
  inputs[".cbParams"] = info.parameterSize;
  inputs[".raSearchStart"] = raSearchStart;
  inputs[".raSearch"] = raSearchStart;
  return inputs;
}

// Where the return address should be: above the callee's arguments, the
// locals and the saved registers. A context frame stopped in an FPO function
// right after a system call returned may still hold its own address there
// (Breakpad's case): the slot after it is the one.
template <class IsReturnAddress>
uint64_t returnAddressSlot(const Frame &frame, const FrameInfo &info, const Target &target,
                           IsReturnAddress isReturnAddress) {
  uint64_t computed = frame.sp + frame.calleeArgumentBytes + info.localSize + info.savedRegisterSize;
  std::optional<Found> found = scanForReturnAddress(target, computed, AlignmentWords, isReturnAddress);
  if (!found) return computed;
  if (frame.trust == FrameTrust::Context && info.type == FrameInfo::Fpo && found->slot == computed &&
      found->returnAddress == frame.ip)
    if (std::optional<Found> next = scanForReturnAddress(target, computed + Word, AlignmentWords, isReturnAddress))
      return next->slot;
  return found->slot;
}

// The caller's registers the record gives: by its program, or, without one,
// the return address at the slot, and ebp from the saved registers when the
// function used ebp for its own purposes (else ebp is untouched).
std::optional<PostfixVariables> evaluateRecord(const Frame &frame, const FrameInfo &info, const Target &target,
                                               uint64_t slot) {
  PostfixVariables caller;
  if (!info.program.empty()) {
    auto read = [&](uint64_t address) { return target.readPointer(address, Word); };
    if (!runPostfixProgram(info.program, programInputs(frame, info, slot), caller, read, Word)) return std::nullopt;
    return caller;
  }
  std::optional<uint64_t> returnAddress = target.readPointer(slot, Word);
  if (!returnAddress) return std::nullopt;
  caller["$eip"] = *returnAddress;
  caller["$esp"] = slot + Word;
  if (info.allocatesBasePointer) {
    uint64_t savedEbp = frame.sp + frame.calleeArgumentBytes + info.savedRegisterSize - 2 * Word;
    std::optional<uint64_t> ebp = target.readPointer(savedEbp, Word);
    if (!ebp) return std::nullopt;
    caller["$ebp"] = *ebp;
  }
  return caller;
}

std::optional<uint64_t> valueOf(const PostfixVariables &variables, llvm::StringRef name) {
  auto found = variables.find(name);
  return found == variables.end() ? std::nullopt : std::optional(found->second);
}

bool readable(const Target &target, uint64_t address) { return target.readPointer(address, Word).has_value(); }

// A caller's ebp that points nowhere (or below a return address a scan had
// to find, a sign of skipped frames) is searched for in the callee's
// saved-register area, from its top: the prolog saves ebp first.
std::optional<uint64_t> searchSavedEbp(const Frame &frame, const FrameInfo &info, const Target &target,
                                       uint64_t scanOffset) {
  uint64_t low = frame.sp + frame.calleeArgumentBytes;
  uint64_t high = low + std::min<uint64_t>(info.savedRegisterSize + scanOffset, SavedEbpSearchWords * Word);
  for (uint64_t slot = high; slot >= low && slot >= Word; slot -= Word) {
    std::optional<uint64_t> value = target.readPointer(slot, Word);
    if (!value) break;
    if (readable(target, *value)) return value;
  }
  return std::nullopt;
}

// The PDB the module resolver matched to the module (by its GUID and age),
// beside its image or alone; empty when none. (A MinGW module's debug file is
// DWARF, which has no frame data.)
const std::string &matchedPdb(const Module &module) {
  return module.image ? module.image->pdbPath() : module.pdbPath;
}

} // namespace

// The frame data of the module's matched PDB, read once; null when it has
// none or it does not read.
const PdbFrameData *StackWinUnwinder::pdbFrameData(const Module &module) {
  const std::string &pdb = matchedPdb(module);
  if (pdb.empty()) return nullptr;
  auto [entry, fresh] = pdbs_.try_emplace(pdb);
  if (fresh) {
    auto table = PdbFrameData::open(pdb);
    if (table)
      entry->second = std::move(*table);
    else
      llvm::consumeError(table.takeError()); // its names come from elsewhere, and say whether it reads
  }
  return entry->second.get();
}

// A symbol file was made from the PDB and stands in for it.
std::optional<FrameInfo> StackWinUnwinder::frameInfo(const Module &module, uint64_t offset) {
  if (module.symbolFile) return module.symbolFile->windowsFrameInfo(offset);
  const PdbFrameData *table = pdbFrameData(module);
  return table ? table->at(offset) : std::nullopt;
}

// A return address as the scan takes one; and where the module's code is not
// at hand to show the call, one inside a function its PDB's frame data
// describes, as the scan takes one inside a symbol file's function
// (Breakpad's rule with symbols).
bool StackWinUnwinder::isReturnAddress(const Target &target, uint64_t value) {
  if (StackScanUnwinder::isPlausibleReturnAddress(target, value)) return true;
  const Module *module = target.moduleAt(value);
  if (!module || module->symbolFile || value <= module->base || callBefore(target, value) != CallBefore::Unknown)
    return false;
  const PdbFrameData *table = pdbFrameData(*module);
  return table && table->at(value - 1 - module->base);
}

UnwindResult StackWinUnwinder::unwind(const Frame &frame, const Target &target) {
  if (target.arch() != Arch::X86) return UnwindResult::noInfo(""); // STACK WIN records describe 32-bit x86 code only
  const Module *module = frame.module;
  if (!module || (!module->symbolFile && matchedPdb(*module).empty())) return UnwindResult::noInfo(""); // not its kind of frame
  std::optional<FrameInfo> info = frameInfo(*module, frame.lookupAddress() - module->base);
  if (!info)
    return UnwindResult::noInfo(module->symbolFile ? "the symbol file has no STACK WIN record for the address"
                                                   : "the PDB has no frame data for the address");

  auto isReturnAddress = [&](uint64_t value) { return this->isReturnAddress(target, value); };
  uint64_t raSearchStart = returnAddressSlot(frame, *info, target, isReturnAddress);
  std::optional<PostfixVariables> caller = evaluateRecord(frame, *info, target, raSearchStart);
  std::optional<uint64_t> eip = caller ? valueOf(*caller, "$eip") : std::nullopt;
  std::optional<uint64_t> esp = caller ? valueOf(*caller, "$esp") : std::nullopt;
  if (!eip || !esp) return UnwindResult::noInfo("the STACK WIN record does not give the caller's eip and esp");
  // ebp keeps its value where the record does not say otherwise.
  std::optional<uint64_t> ebp = valueOf(*caller, "$ebp");
  if (!ebp) ebp = frame.regs.fp();

  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.argumentBytes = info->parameterSize;
  // Zero eip and ebp mark the outermost frame; a return address outside
  // every module is searched for further up the stack.
  uint64_t scanOffset = 0;
  if ((*eip != 0 || ebp.value_or(0) != 0) && !target.moduleAt(*eip)) {
    uint64_t from = raSearchStart + Word;
    unsigned words = frame.trust == FrameTrust::Context ? ContextSearchWords : SearchWords;
    if (std::optional<Found> found = scanForReturnAddress(target, from, words, isReturnAddress)) {
      eip = found->returnAddress;
      esp = found->slot + Word;
      scanOffset = found->slot - from;
      result.trust = FrameTrust::Scan;
    }
  }
  // A function that does not touch ebp leaves the caller's in place.
  bool ebpUntouched = info->program.empty() && !info->allocatesBasePointer;
  bool ebpDoubtful = !ebp || !readable(target, *ebp) || (result.trust && *ebp <= *esp + scanOffset);
  if (!ebpUntouched && *eip != 0 && ebpDoubtful)
    if (std::optional<uint64_t> found = searchSavedEbp(frame, *info, target, scanOffset)) ebp = found;

  result.caller = RegisterFile(Arch::X86);
  if (ebp) result.caller.set(result.caller.fpRegister(), *ebp);
  for (auto [reg, name] : {std::pair{Ebx, "$ebx"}, std::pair{Esi, "$esi"}, std::pair{Edi, "$edi"}})
    if (std::optional<uint64_t> value = valueOf(*caller, name)) result.caller.set(reg, *value);
  result.caller.setSp(*esp);
  result.caller.setPc(*eip);
  return result;
}

} // namespace stackwalk
