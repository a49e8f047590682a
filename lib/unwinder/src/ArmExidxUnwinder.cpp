#include "stackwalk/unwinder/ArmExidxUnwinder.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"
#include "stackwalk/unwinder/ArmEhabi.h"

namespace stackwalk {
namespace {

// The module's exception index table, at its runtime address.
std::optional<std::pair<uint64_t, uint64_t>> exidxTable(const Module &module) {
  if (!module.image) return std::nullopt;
  std::optional<ModuleImage::Section> section = module.image->section(".ARM.exidx");
  if (!section || section->data.empty()) return std::nullopt;
  return std::pair(section->address + module.loadBias(), uint64_t(section->data.size()));
}

std::optional<ArmUnwindEntry> entryFor(const Module &module, uint64_t address, const Target &target) {
  auto table = exidxTable(module);
  if (!table) return std::nullopt;
  return findArmUnwindEntry(target, table->first, table->second, address);
}

} // namespace

UnwindResult ArmExidxUnwinder::unwind(const Frame &frame, const Target &target) {
  if (target.arch() != Arch::Arm || !frame.module) return UnwindResult::noInfo("");
  std::optional<ArmUnwindEntry> entry = entryFor(*frame.module, frame.lookupAddress(), target);
  if (!entry) return UnwindResult::noInfo("no .ARM.exidx entry covers " + hex(frame.ip) + " in " + frame.module->name);
  if (entry->cannotUnwind)
    return UnwindResult::noInfo("the .ARM.exidx entry of the function at " + hex(entry->functionStart) +
                                " is EXIDX_CANTUNWIND");
  llvm::Expected<RegisterFile> caller = executeArmUnwind(entry->opcodes, frame.regs, target);
  if (!caller) return UnwindResult::noInfo("ARM unwind instructions: " + llvm::toString(caller.takeError()));
  UnwindResult result;
  result.status = UnwindResult::Status::Caller;
  result.caller = std::move(*caller);
  return result;
}

llvm::Expected<std::vector<std::string>> ArmExidxUnwinder::describe(const Module &module, uint64_t address,
                                                                    const Target &target) {
  std::optional<ArmUnwindEntry> entry = entryFor(module, address, target);
  if (!entry) return fail("no .ARM.exidx entry covers " + hex(address) + " in " + module.name);
  std::vector<std::string> out{".ARM.exidx of " + module.name + ": the function at " + hex(entry->functionStart) +
                               ", " + entry->personality};
  for (std::string &line : describeArmUnwind(entry->opcodes)) out.push_back("  " + line);
  return out;
}

} // namespace stackwalk
