#include "stackwalk/unwinder/Win64Unwinder.h"

#include "stackwalk/unwinder/Arm64WindowsUnwind.h"
#include "stackwalk/unwinder/Win64Unwind.h"

#include "llvm/ADT/StringExtras.h"

namespace stackwalk {

const Win64Unwinder::Table &Win64Unwinder::functionTable(const Module &module, const Target &target) {
  auto cached = tables_.find(module.base);
  if (cached != tables_.end()) return cached->second;
  Table &entry = tables_[module.base];
  if (auto table = Win64FunctionTable::read(target, module.base)) entry.table = std::move(*table);
  else entry.why = llvm::toString(table.takeError());
  return entry;
}

UnwindResult Win64Unwinder::unwind(const Frame &frame, const Target &target) {
  if (!frame.module) return UnwindResult::noInfo("no module covers 0x" + llvm::utohexstr(frame.ip, true));
  const Module &module = *frame.module;
  const Table &found = functionTable(module, target);
  if (!found.table) return UnwindResult::noInfo("no PE exception directory for " + module.name + ": " + found.why);
  const Win64FunctionTable &table = *found.table;
  auto function = table.entryCovering(target, frame.lookupAddress() - module.base);
  if (!function) return UnwindResult::noInfo(module.name + "'s .pdata: " + llvm::toString(function.takeError()));
  bool arm64 = target.arch() == Arch::Arm64;
  // No entry: a leaf function, which neither saves registers nor moves the
  // stack pointer, so the return address is at the stack pointer (x64) or
  // still in the link register (ARM64).
  if (!*function) return arm64 ? unwindArm64Leaf(frame) : unwindWin64Leaf(target, frame);
  auto result = arm64 ? unwindArm64Windows(target, module.base, **function, frame)
                      : unwindWin64AtCall(target, module.base, **function, frame);
  if (!result) return UnwindResult::noInfo(module.name + ": " + llvm::toString(result.takeError()));
  return *result;
}

} // namespace stackwalk
