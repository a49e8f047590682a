#include "stackwalk/unwinder/UnwindDescription.h"

#include "Win64UnwindInfo.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/core/Hex.h"

#include "llvm/ADT/StringExtras.h"


using namespace llvm;
using namespace llvm::Win64EH;

namespace stackwalk {
namespace {

const char *const Win64RegisterNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                            "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};

std::string flagsText(uint8_t flags) {
  std::vector<llvm::StringRef> names;
  for (auto [bit, name] : {std::pair{UNW_ExceptionHandler, "UNW_FLAG_EHANDLER"},
                           std::pair{UNW_TerminateHandler, "UNW_FLAG_UHANDLER"}, std::pair{UNW_ChainInfo, "UNW_FLAG_CHAININFO"}})
    if (flags & bit) names.push_back(name);
  return names.empty() ? "none" : llvm::join(names, "|");
}

// One unwind code as WinDbg's .fnent lists it: what the prolog did at an offset.
std::string codeText(const UnwindInfoView &info, size_t i) {
  uint8_t op = info.op(i), opInfo = info.opInfo(i);
  std::string reg = Win64RegisterNames[opInfo];
  switch (op) {
  case UOP_PushNonVol: return "UWOP_PUSH_NONVOL " + reg;
  case UOP_AllocLarge:
    return "UWOP_ALLOC_LARGE size " + hex(opInfo ? info.slot32(i + 1) : uint64_t(info.codes[i + 1]) * 8);
  case UOP_AllocSmall: return "UWOP_ALLOC_SMALL size " + hex(uint64_t(opInfo) * 8 + 8);
  case UOP_SetFPReg:
    return std::string("UWOP_SET_FPREG ") + Win64RegisterNames[info.frameRegister] + " = rsp + " +
           hex(uint64_t(info.frameOffset) * 16);
  case UOP_SaveNonVol: return "UWOP_SAVE_NONVOL " + reg + " at frame + " + hex(uint64_t(info.codes[i + 1]) * 8);
  case UOP_SaveNonVolBig: return "UWOP_SAVE_NONVOL_FAR " + reg + " at frame + " + hex(info.slot32(i + 1));
  case UOP_Epilog:
    // Version 2: the first gives the epilogs' size (OpInfo bit 0: one at the
    // function's end); the others each epilog's distance from the end.
    return "UWOP_EPILOG size/offset " + hex(info.codeOffset(i) | uint32_t(opInfo) << 8) + " flags " +
           hex(opInfo);
  case UOP_SpareCode: return "UWOP_SPARE_CODE";
  case UOP_SaveXMM128: return "UWOP_SAVE_XMM128 xmm" + std::to_string(opInfo) + " at frame + " + hex(uint64_t(info.codes[i + 1]) * 16);
  case UOP_SaveXMM128Big:
    return "UWOP_SAVE_XMM128_FAR xmm" + std::to_string(opInfo) + " at frame + " + hex(info.slot32(i + 1));
  case UOP_PushMachFrame: return std::string("UWOP_PUSH_MACHFRAME") + (opInfo ? " with error code" : "");
  case UOP_SetFPRegLarge:
    return std::string("UWOP_SET_FPREG_LARGE ") + Win64RegisterNames[info.frameRegister] + " = rsp + " +
           hex(uint64_t(info.slot32(i + 1)) * 16);
  }
  return "unknown code " + std::to_string(op);
}

void describeInfo(std::vector<std::string> &out, const UnwindInfoView &info) {
  std::string frame = info.frameRegister ? std::string(Win64RegisterNames[info.frameRegister]) + ", offset " +
                                               hex(uint64_t(info.frameOffset) * 16)
                                         : "none";
  out.push_back("UNWIND_INFO at " + hex(info.address) + ": version " + std::to_string(info.version) +
                ", flags " + flagsText(info.flags) + ", prolog size " + hex(info.prologSize) + ", " +
                std::to_string(info.codes.size()) + " code slot(s), frame register " + frame);
  for (size_t i = 0; i < info.codes.size(); i += slotsOf(info.op(i), info.opInfo(i)))
    out.push_back("  [" + std::to_string(i) + "] offset " + hex(info.codeOffset(i)) + ": " + codeText(info, i));
}

std::string entryText(const RuntimeFunction &function, uint64_t imageBase) {
  return "begin " + hex(imageBase + function.begin) + " (RVA " + hex(function.begin) + "), end " +
         hex(imageBase + function.end) + " (RVA " + hex(function.end) + "), unwind info RVA " +
         hex(function.unwindInfo);
}

} // namespace

Expected<std::vector<std::string>> describeWin64Unwind(const MemorySource &memory, uint64_t imageBase,
                                                       uint64_t address) {
  auto covering = runtimeFunctionCovering(memory, imageBase, address);
  if (!covering) return covering.takeError();
  std::vector<std::string> out;
  if (!*covering) {
    out.push_back("no RUNTIME_FUNCTION covers " + hex(address) +
                  ": a leaf function (it saves no register and does not move rsp; the return address is at rsp)");
    return out;
  }
  RuntimeFunction function = **covering;
  out.push_back("RUNTIME_FUNCTION: " + entryText(function, imageBase));
  for (unsigned depth = 0;; ++depth) {
    if (depth > ChainLimit) return fail("chained unwind info is deeper than " + Twine(ChainLimit) + " (a loop?)");
    if (function.unwindInfo & 1) {
      auto direct = resolveIndirect(memory, imageBase, function);
      if (!direct) return direct.takeError();
      function = *direct;
      out.push_back("indirect, to RUNTIME_FUNCTION: " + entryText(function, imageBase));
    }
    auto info = readUnwindInfo(memory, imageBase, function);
    if (!info) return info.takeError();
    describeInfo(out, *info);
    if (info->flags & (UNW_ExceptionHandler | UNW_TerminateHandler) && !(info->flags & UNW_ChainInfo)) {
      if (auto handler = memory.readValue<uint32_t>(info->trailerAddress()))
        out.push_back("  handler RVA " + hex(*handler) + " (" + hex(imageBase + *handler) + ")");
    }
    if (!(info->flags & UNW_ChainInfo)) break;
    auto parent = chainedFunction(memory, *info);
    if (!parent) return parent.takeError();
    function = *parent;
    out.push_back("chained to RUNTIME_FUNCTION: " + entryText(function, imageBase));
  }
  return out;
}

} // namespace stackwalk
