#include "stackwalk/unwinder/UnwindDescription.h"

#include "stackwalk/unwinder/Arm64WindowsUnwind.h"

#include "stackwalk/core/Hex.h"
#include "stackwalk/core/Win64FunctionTable.h"

using llvm::Expected;

namespace stackwalk {
namespace {

std::string x(unsigned n) {
  if (n == 30) return "lr";
  std::string name = "x";
  return name.append(std::to_string(n));
}
std::string at(int64_t offset) { return offset < 0 ? "[sp-" + std::to_string(-offset) + "]!" : "[sp+" + std::to_string(offset) + "]"; }

// One unwind code as the prolog instruction it stands for, in Microsoft's names.
std::string codeText(const uint8_t *c) {
  uint8_t op = c[0], next = arm64CodeLength(op) > 1 ? c[1] : 0;
  unsigned x4 = ((op & 3) << 2) | (next >> 6), x3 = ((op & 1) << 2) | (next >> 6), z6 = next & 0x3f;
  if (op <= 0x1f) return "alloc_s " + std::to_string(16 * op);
  if (op <= 0x3f) return "save_r19r20_x x19, x20 at " + at(-8 * (op & 0x1f));
  if (op <= 0x7f) return "save_fplr x29, lr at " + at(8 * (op & 0x3f));
  if (op <= 0xbf) return "save_fplr_x x29, lr at " + at(-8 * ((op & 0x3f) + 1));
  if (op <= 0xc7) return "alloc_m " + std::to_string(16 * (((op & 7) << 8) | next));
  if (op <= 0xcb) return "save_regp " + x(19 + x4) + ", " + x(20 + x4) + " at " + at(8 * z6);
  if (op <= 0xcf) return "save_regp_x " + x(19 + x4) + ", " + x(20 + x4) + " at " + at(-8 * (z6 + 1));
  if (op <= 0xd3) return "save_reg " + x(19 + x4) + " at " + at(8 * z6);
  if (op <= 0xd5) return "save_reg_x " + x(19 + (((op & 1) << 3) | (next >> 5))) + " at " + at(-8 * ((next & 0x1f) + 1));
  if (op <= 0xd7) return "save_lrpair " + x(19 + 2 * x3) + ", lr at " + at(8 * z6);
  if (op <= 0xd9) return "save_fregp d" + std::to_string(8 + x3) + ", d" + std::to_string(9 + x3) + " at " + at(8 * z6);
  if (op <= 0xdb) return "save_fregp_x d" + std::to_string(8 + x3) + ", d" + std::to_string(9 + x3) + " at " + at(-8 * (z6 + 1));
  if (op <= 0xdd) return "save_freg d" + std::to_string(8 + x3) + " at " + at(8 * z6);
  if (op == 0xde) return "save_freg_x d" + std::to_string(8 + (next >> 5)) + " at " + at(-8 * ((next & 0x1f) + 1));
  switch (op) {
  case 0xdf: return "alloc_z (SVE)";
  case 0xe0: return "alloc_l " + std::to_string(16 * ((c[1] << 16) | (c[2] << 8) | c[3]));
  case 0xe1: return "set_fp (mov x29, sp)";
  case 0xe2: return "add_fp (add x29, sp, #" + std::to_string(8 * next) + ")";
  case 0xe3: return "nop";
  case 0xe4: return "end";
  case 0xe5: return "end_c (the chained scope's end)";
  case 0xe6: return "save_next (the next register pair)";
  case 0xe7: return "save_any_reg";
  case 0xe8: return "MSFT_OP_TRAP_FRAME";
  case 0xe9: return "MSFT_OP_MACHINE_FRAME";
  case 0xea: return "MSFT_OP_CONTEXT";
  case 0xec: return "MSFT_OP_CLEAR_UNWOUND_TO_CALL";
  case 0xfc: return "pac_sign_lr";
  default: return "reserved";
  }
}

std::string bytesText(const uint8_t *c, unsigned length) {
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    if (i) out += ' ';
    out += llvm::utohexstr(c[i], true, 2);
  }
  return out;
}

std::string positionText(const Arm64Position &position) {
  switch (position.part) {
  case Arm64Position::Part::Prolog:
    return "in the prolog: from code [0], the first " + std::to_string(position.skipped) +
           " code(s) skipped (their instructions have not run)";
  case Arm64Position::Part::Epilog:
    return "in an epilog: from code [" + std::to_string(position.codeIndex) + "], the first " +
           std::to_string(position.skipped) + " code(s) skipped (their instructions have run)";
  case Arm64Position::Part::Body: break;
  }
  return "in the body: every prolog code from [0]";
}

} // namespace

Expected<std::vector<std::string>> describeArm64Unwind(const MemorySource &memory, uint64_t imageBase,
                                                       uint64_t address) {
  auto covering = runtimeFunctionCovering(memory, imageBase, address);
  if (!covering) return covering.takeError();
  std::vector<std::string> out;
  if (!*covering) {
    out.push_back("no RUNTIME_FUNCTION covers " + hex(address) +
                  ": a leaf function (it saves no register and does not move sp; the return address is in lr)");
    return out;
  }
  const RuntimeFunction &function = **covering;
  uint32_t word = function.unwindInfo;
  out.push_back("RUNTIME_FUNCTION: begin " + hex(imageBase + function.begin) + " (RVA " + hex(function.begin) +
                "), end " + hex(imageBase + function.end) + ", unwind data " + hex(word));
  if (word & 3)
    out.push_back("packed (Flag " + std::to_string(word & 3) + "): RegF " + std::to_string((word >> 13) & 7) +
                  ", RegI " + std::to_string((word >> 16) & 15) + ", H " + std::to_string((word >> 20) & 1) +
                  ", CR " + std::to_string((word >> 21) & 3) + ", FrameSize " +
                  std::to_string(16 * ((word >> 23) & 0x1ff)) + " bytes; as codes:");
  auto data = readArm64UnwindData(memory, imageBase, word);
  if (!data) return data.takeError();
  std::string epilogs = data->singleEpilogCodeIndex
                            ? "one epilog at the end, its codes from [" + std::to_string(*data->singleEpilogCodeIndex) + "]"
                            : std::to_string(data->epilogs.size()) + " epilog scope(s)";
  for (const Arm64UnwindData::EpilogScope &scope : data->epilogs)
    epilogs += "; at +" + hex(4 * scope.start) + " codes from [" + std::to_string(scope.codeIndex) + "]";
  out.push_back((word & 3 ? std::string() : ".xdata at " + hex(imageBase + word) + ": ") + "function length " +
                std::to_string(data->functionLength) + " instructions, " + epilogs);
  const std::vector<uint8_t> &codes = data->codes;
  for (size_t i = 0; i < codes.size(); i += arm64CodeLength(codes[i])) {
    unsigned length = std::min<size_t>(arm64CodeLength(codes[i]), codes.size() - i);
    if (length < arm64CodeLength(codes[i])) {
      out.push_back("  [" + std::to_string(i) + "] " + bytesText(&codes[i], length) + " (cut short)");
      break;
    }
    out.push_back("  [" + std::to_string(i) + "] " + bytesText(&codes[i], length) + "  " + codeText(&codes[i]));
  }
  uint32_t offset = uint32_t((address - imageBase - function.begin) / 4);
  out.push_back("at " + hex(address) + " (instruction " + std::to_string(offset) + "): " +
                positionText(arm64PositionOf(*data, offset)));
  return out;
}

} // namespace stackwalk
