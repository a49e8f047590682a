#include "stackwalk/walk/UnwindInfo.h"

#include "NativeFrames.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"
#include "stackwalk/unwinder/ArmExidxUnwinder.h"
#include "stackwalk/unwinder/UnwindDescription.h"

#include "llvm/Object/COFF.h"

namespace stackwalk {
namespace {

const Module *moduleNamed(const Target &target, llvm::StringRef name) {
  for (const Module &module : target.modules)
    if (llvm::StringRef(module.name).equals_insensitive(name)) return &module;
  return nullptr;
}

// The address `where` names: a number, module+offset, or module!symbol[+offset].
llvm::Expected<uint64_t> resolve(const Target &target, llvm::StringRef where) {
  uint64_t address = 0;
  if (!where.getAsInteger(0, address)) return address;
  auto [place, offsetText] = where.rsplit('+');
  uint64_t offset = 0;
  if (offsetText.empty() || offsetText.getAsInteger(0, offset)) place = where, offset = 0;
  auto [moduleName, symbol] = place.split('!');
  const Module *module = moduleNamed(target, moduleName);
  if (!module)
    return failRequest("no module named " + moduleName + " in the dump (give an address, module+0xOFFSET or "
                       "module!function)");
  if (symbol.empty()) return module->base + offset;
  if (!module->image) return failRequest(moduleName + " has no file here, so no symbol names it: give module+0xOFFSET");
  std::optional<uint64_t> fileAddress = module->image->symbolAddress(symbol);
  if (!fileAddress)
    return failRequest("no symbol " + symbol + " in " + moduleName + "'s symbol tables (spelled as the symbol table "
                       "has it: mangled for C++)");
  return *fileAddress + module->loadBias() + offset;
}

bool isPeImage(const Module &module, const Target &target) {
  if (module.image) return llvm::isa<llvm::object::COFFObjectFile>(module.image->object());
  return target.os() == OS::Windows;
}

} // namespace

llvm::Expected<UnwindInfoReport> unwindInfoAt(const Target &target, WalkSession &session, llvm::StringRef where) {
  auto address = resolve(target, where.trim());
  if (!address) return address.takeError();
  UnwindInfoReport report;
  report.address = *address;
  report.module = target.moduleAt(*address);
  if (!report.module) return failRequest("no module of the dump covers " + hex(*address));
  const std::vector<SourceFrame> &sources = session.symbolizer.symbolize(*report.module, *address);
  if (!sources.empty()) {
    report.function = sources.back().function;
    report.functionOffset = offsetInFunction(sources.back(), *report.module, *address);
  }
  llvm::Expected<std::vector<std::string>> lines = std::vector<std::string>();
  if (isPeImage(*report.module, target)) {
    if (target.arch() == Arch::Arm64) {
      report.kind = "Windows ARM64 unwind info";
      lines = describeArm64Unwind(target, report.module->base, *address);
    } else if (target.arch() == Arch::X86_64) {
      report.kind = "Windows x64 unwind info";
      lines = describeWin64Unwind(target, report.module->base, *address);
    } else {
      return fail("only x64 and ARM64 PE unwind info can be described");
    }
  } else {
    report.kind = "DWARF CFI";
    lines = session.cfi.describe(*report.module, *address, target.arch());
    // 32-bit ARM code without CFI has its exception index table.
    if (!lines && target.arch() == Arch::Arm) {
      llvm::consumeError(lines.takeError());
      report.kind = "ARM exception index (EHABI)";
      lines = ArmExidxUnwinder::describe(*report.module, *address, target);
    }
  }
  if (!lines) return lines.takeError();
  report.lines = std::move(*lines);
  return report;
}

} // namespace stackwalk
