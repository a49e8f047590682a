#include "Win64UnwindInfo.h"

#include "stackwalk/core/Fail.h"

#include <array>

using namespace llvm;
using namespace llvm::Win64EH;

namespace stackwalk {

unsigned slotsOf(uint8_t op, uint8_t opInfo) {
  switch (op) {
  case UOP_AllocLarge: return opInfo ? 3 : 2;
  case UOP_SaveNonVol: case UOP_Epilog: case UOP_SaveXMM128: return 2;
  case UOP_SaveNonVolBig: case UOP_SaveXMM128Big: case UOP_SetFPRegLarge: case UOP_SpareCode: return 3;
  default: return 1;
  }
}

Expected<UnwindInfoView> readUnwindInfo(const MemorySource &memory, uint64_t imageBase,
                                        const RuntimeFunction &function) {
  uint64_t at = imageBase + function.unwindInfo;
  std::array<uint8_t, 4> header;
  if (!memory.read(at, header)) return fail("UNWIND_INFO at 0x" + Twine::utohexstr(at) + " is not readable");
  UnwindInfoView info;
  info.address = at;
  info.version = header[0] & 7;
  info.flags = header[0] >> 3;
  info.prologSize = header[1];
  info.frameRegister = header[3] & 0xf;
  info.frameOffset = header[3] >> 4;
  if (info.version != 1 && info.version != 2) return fail("unsupported UNWIND_INFO version " + Twine(unsigned(info.version)));
  info.codes.resize(header[2]);
  if (!info.codes.empty() &&
      !memory.read(at + 4, {reinterpret_cast<uint8_t *>(info.codes.data()), info.codes.size() * 2}))
    return fail("the unwind codes at 0x" + Twine::utohexstr(at + 4) + " are not readable");
  for (size_t i = 0; i < info.codes.size(); i += slotsOf(info.op(i), info.opInfo(i))) {
    if (info.op(i) > UOP_SetFPRegLarge) return fail("unknown unwind code " + Twine(unsigned(info.op(i))));
    if (i + slotsOf(info.op(i), info.opInfo(i)) > info.codes.size()) return fail("an unwind code runs past the count");
  }
  return info;
}

static Expected<RuntimeFunction> readRuntimeFunction(const MemorySource &memory, uint64_t at, const char *what) {
  std::array<uint32_t, 3> raw;
  if (!memory.read(at, {reinterpret_cast<uint8_t *>(raw.data()), sizeof raw}))
    return fail(Twine(what) + " at 0x" + Twine::utohexstr(at) + " is not readable");
  return RuntimeFunction{raw[0], raw[1], raw[2]};
}

Expected<RuntimeFunction> chainedFunction(const MemorySource &memory, const UnwindInfoView &info) {
  return readRuntimeFunction(memory, info.trailerAddress(), "chained unwind info");
}

Expected<RuntimeFunction> resolveIndirect(const MemorySource &memory, uint64_t imageBase, RuntimeFunction function) {
  for (unsigned depth = 0; function.unwindInfo & 1; ++depth) {
    if (depth > ChainLimit) return fail("indirect RUNTIME_FUNCTIONs loop");
    auto next = readRuntimeFunction(memory, imageBase + (function.unwindInfo & ~1u), "RUNTIME_FUNCTION");
    if (!next) return next.takeError();
    function = *next;
  }
  return function;
}

} // namespace stackwalk
