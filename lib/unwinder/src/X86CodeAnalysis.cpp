#include "X86CodeAnalysis.h"

#include "ZydisLibrary.h"

#include <algorithm>
#include <map>

namespace stackwalk {
namespace {

// The general-purpose registers of a mode, by Zydis's register and DWARF's number.
class Registers {
public:
  Registers(const ZydisLibrary &zydis, bool is64)
      : zydis_(zydis), first_(is64 ? ZYDIS_REGISTER_RAX : ZYDIS_REGISTER_EAX),
        last_(is64 ? ZYDIS_REGISTER_R15 : ZYDIS_REGISTER_EDI), stackPointer_(is64 ? ZYDIS_REGISTER_RSP : ZYDIS_REGISTER_ESP),
        framePointer_(is64 ? ZYDIS_REGISTER_RBP : ZYDIS_REGISTER_EBP), is64_(is64) {}

  ZydisRegister stackPointer() const { return stackPointer_; }
  ZydisRegister framePointer() const { return framePointer_; }
  // Whether `reg` is (part of) the stack or frame pointer.
  bool inStackPointer(ZydisRegister reg) const { return zydis_.enclosing(reg) == stackPointer_; }
  bool inFramePointer(ZydisRegister reg) const { return zydis_.enclosing(reg) == framePointer_; }
  // A whole register's DWARF number; -1 for any other (a part, a segment register).
  int dwarfNumber(ZydisRegister reg) const {
    if (reg < first_ || reg > last_) return -1;
    unsigned index = reg - first_; // Zydis: ax cx dx bx sp bp si di, then r8-r15
    static constexpr int x86_64[] = {0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15};
    return is64_ ? x86_64[index] : int(index); // i386's DWARF numbers follow the encoding
  }

private:
  const ZydisLibrary &zydis_;
  ZydisRegister first_, last_, stackPointer_, framePointer_;
  bool is64_;
};

// System V's callee-saved registers by DWARF number: rbx, rbp, r12-r15; ebx, ebp, esi, edi.
bool isCalleeSaved(int dwarf, bool is64) {
  if (is64) return dwarf == 3 || dwarf == 6 || (dwarf >= 12 && dwarf <= 15);
  return dwarf == 3 || (dwarf >= 5 && dwarf <= 7);
}

// The frame as the instructions so far left it.
struct FrameState {
  bool stackPointerKnown = true;
  int64_t cfaFromStackPointer = 0; // CFA - sp
  bool framePointerHoldsFrame = false;
  int64_t cfaFromFramePointer = 0; // CFA - fp
  std::vector<X86FrameShape::SavedRegister> saved;
};

// What one instruction does to the stack.
enum class Effect {
  Body,       // grows the stack, sets the frame pointer, calls or branches: the function's body
  Neutral,    // leaves the stack as it is
  Releases,   // pop, add to or restore the stack pointer: perhaps an epilogue
  EndsPath,   // ret or an unconditional jump: the next byte is reached from elsewhere
  Unfollowed, // changes the stack pointer in a way not followed here
};

class Analysis {
public:
  Analysis(const ZydisLibrary &zydis, bool is64) : registers_(zydis, is64), is64_(is64), word_(is64 ? 8 : 4) {
    state_.cfaFromStackPointer = word_; // the return address the call pushed
  }

  // The instruction at `offset` from the function's start. Where a forward
  // branch seen before goes, the frame is the branch's: the code before it
  // may end a path (a ret, or a call that never returns, after pushing its
  // arguments) or fall through with the same frame. Elsewhere after a path's
  // end the frame is the body's: an epilogue may mix other instructions among
  // its releases (GCC sets up a tail call's arguments between its pops), so
  // the body's frame is the one before the run of releases and other
  // instructions that the path's end closes with the stack back at the return
  // address. A jump that leaves more on the stack goes elsewhere in the body.
  bool step(const X86Instruction &instruction, uint64_t offset) {
    if (auto branched = branchTargets_.find(offset); branched != branchTargets_.end()) {
      state_ = body_ = branched->second;
      inRelease_ = false;
    }
    Effect effect = apply(instruction);
    if (effect == Effect::Unfollowed) state_.stackPointerKnown = false;
    noteForwardBranch(instruction, offset);
    bool returned = state_.stackPointerKnown && !state_.framePointerHoldsFrame && state_.cfaFromStackPointer == word_;
    if (effect == Effect::EndsPath && returned) state_ = body_;
    if (effect == Effect::Releases) inRelease_ = true;
    else if (effect != Effect::Neutral) inRelease_ = false;
    if (!inRelease_) body_ = state_;
    return state_.stackPointerKnown || state_.framePointerHoldsFrame;
  }

  std::optional<X86FrameShape> shape() const {
    X86FrameShape shape;
    if (state_.framePointerHoldsFrame) shape.cfaFromFramePointer = state_.cfaFromFramePointer;
    if (state_.stackPointerKnown) shape.cfaFromStackPointer = state_.cfaFromStackPointer;
    if (!shape.cfaFromFramePointer && !shape.cfaFromStackPointer) return std::nullopt;
    shape.saved = state_.saved;
    return shape;
  }

private:
  static const ZydisDecodedOperand *visible(const X86Instruction &instruction, unsigned index) {
    return index < instruction.info.operand_count_visible ? &instruction.operands[index] : nullptr;
  }
  static ZydisRegister reg(const X86Instruction &instruction, unsigned index) {
    const ZydisDecodedOperand *operand = visible(instruction, index);
    return operand && operand->type == ZYDIS_OPERAND_TYPE_REGISTER ? operand->reg.value : ZYDIS_REGISTER_NONE;
  }
  static std::optional<int64_t> imm(const X86Instruction &instruction, unsigned index) {
    const ZydisDecodedOperand *operand = visible(instruction, index);
    if (!operand || operand->type != ZYDIS_OPERAND_TYPE_IMMEDIATE) return std::nullopt;
    return operand->imm.value.s;
  }

  // Whether the instruction writes a register (among its operands, the hidden ones included) in the stack or frame pointer.
  bool writes(const X86Instruction &instruction, bool stackPointer) const {
    for (unsigned i = 0; i < instruction.info.operand_count; ++i) {
      const ZydisDecodedOperand &operand = instruction.operands[i];
      if (operand.type != ZYDIS_OPERAND_TYPE_REGISTER || !(operand.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) continue;
      if (stackPointer ? registers_.inStackPointer(operand.reg.value) : registers_.inFramePointer(operand.reg.value))
        return true;
    }
    return false;
  }

  void adjustStack(int64_t grownBy) { state_.cfaFromStackPointer += grownBy; }

  void push(ZydisRegister pushed) {
    adjustStack(word_);
    int dwarf = registers_.dwarfNumber(pushed);
    bool already = std::any_of(state_.saved.begin(), state_.saved.end(),
                               [&](const auto &slot) { return int(slot.dwarfRegister) == dwarf; });
    if (state_.stackPointerKnown && isCalleeSaved(dwarf, is64_) && !already)
      state_.saved.push_back({unsigned(dwarf), -state_.cfaFromStackPointer});
  }

  void pop(ZydisRegister popped) {
    // The register is restored only from its own slot (i386's `call 1f; 1: pop %ebx` loads an address).
    int dwarf = registers_.dwarfNumber(popped);
    std::erase_if(state_.saved, [&](const auto &slot) {
      return int(slot.dwarfRegister) == dwarf && slot.cfaOffset == -state_.cfaFromStackPointer;
    });
    adjustStack(-int64_t(word_));
    if (popped == registers_.framePointer()) state_.framePointerHoldsFrame = false;
  }

  // The stack pointer set from the frame pointer plus `offset`.
  Effect fromFramePointer(int64_t offset) {
    if (!state_.framePointerHoldsFrame) return Effect::Unfollowed;
    state_.stackPointerKnown = true;
    state_.cfaFromStackPointer = state_.cfaFromFramePointer - offset;
    return Effect::Releases;
  }

  Effect apply(const X86Instruction &instruction) {
    switch (instruction.info.mnemonic) {
    case ZYDIS_MNEMONIC_RET:
    case ZYDIS_MNEMONIC_JMP:
    case ZYDIS_MNEMONIC_UD2: return Effect::EndsPath;
    case ZYDIS_MNEMONIC_CALL:
      // A call of the next instruction pushes its address (old i386 PIC code,
      // which then pops it); any other call returns with the stack as it was.
      if (imm(instruction, 0) == 0) push(ZYDIS_REGISTER_NONE);
      return Effect::Body;
    case ZYDIS_MNEMONIC_PUSH: return push(reg(instruction, 0)), Effect::Body;
    case ZYDIS_MNEMONIC_PUSHFQ:
    case ZYDIS_MNEMONIC_PUSHFD: return push(ZYDIS_REGISTER_NONE), Effect::Body;
    case ZYDIS_MNEMONIC_POP: return pop(reg(instruction, 0)), Effect::Releases;
    case ZYDIS_MNEMONIC_POPFQ:
    case ZYDIS_MNEMONIC_POPFD: return pop(ZYDIS_REGISTER_NONE), Effect::Releases;
    case ZYDIS_MNEMONIC_LEAVE: {
      Effect effect = fromFramePointer(0);
      if (effect != Effect::Unfollowed) pop(registers_.framePointer());
      return effect;
    }
    default: break;
    }
    ZydisRegister dest = reg(instruction, 0);
    ZydisMnemonic mnemonic = instruction.info.mnemonic;
    if (mnemonic == ZYDIS_MNEMONIC_MOV && dest == registers_.framePointer() && reg(instruction, 1) == registers_.stackPointer()) {
      if (!state_.stackPointerKnown) return Effect::Unfollowed;
      state_.framePointerHoldsFrame = true;
      state_.cfaFromFramePointer = state_.cfaFromStackPointer;
      return Effect::Body;
    }
    if (mnemonic == ZYDIS_MNEMONIC_MOV && dest == registers_.stackPointer() && reg(instruction, 1) == registers_.framePointer())
      return fromFramePointer(0);
    if ((mnemonic == ZYDIS_MNEMONIC_SUB || mnemonic == ZYDIS_MNEMONIC_ADD) && dest == registers_.stackPointer()) {
      std::optional<int64_t> amount = imm(instruction, 1);
      if (!amount) return Effect::Unfollowed;
      int64_t grownBy = mnemonic == ZYDIS_MNEMONIC_SUB ? *amount : -*amount;
      adjustStack(grownBy);
      return grownBy >= 0 ? Effect::Body : Effect::Releases;
    }
    if (mnemonic == ZYDIS_MNEMONIC_LEA && dest == registers_.stackPointer()) {
      const ZydisDecodedOperand *address = visible(instruction, 1);
      if (!address || address->type != ZYDIS_OPERAND_TYPE_MEMORY || address->mem.index != ZYDIS_REGISTER_NONE)
        return Effect::Unfollowed;
      int64_t disp = address->mem.disp.value;
      if (address->mem.base == registers_.framePointer()) return fromFramePointer(disp);
      if (address->mem.base != registers_.stackPointer()) return Effect::Unfollowed;
      adjustStack(-disp);
      return disp <= 0 ? Effect::Body : Effect::Releases;
    }
    if (state_.framePointerHoldsFrame && writes(instruction, /*stackPointer=*/false)) {
      // The frame pointer used for something else: the frame is only known by the stack pointer now.
      state_.framePointerHoldsFrame = false;
      int dwarf = registers_.dwarfNumber(registers_.framePointer());
      std::erase_if(state_.saved, [&](const auto &slot) { return int(slot.dwarfRegister) == dwarf; });
    }
    if (writes(instruction, /*stackPointer=*/true)) return Effect::Unfollowed;
    return instruction.info.meta.category == ZYDIS_CATEGORY_COND_BR ? Effect::Body : Effect::Neutral;
  }

  // A direct jump's target further on: the frame there is the one at the jump
  // (the first such jump's, where several go there).
  void noteForwardBranch(const X86Instruction &instruction, uint64_t offset) {
    bool branch = instruction.info.meta.category == ZYDIS_CATEGORY_COND_BR ||
                  instruction.info.meta.category == ZYDIS_CATEGORY_UNCOND_BR;
    const ZydisDecodedOperand *target = visible(instruction, 0);
    if (!branch || !target || target->type != ZYDIS_OPERAND_TYPE_IMMEDIATE || !target->imm.is_relative ||
        target->imm.value.s <= 0)
      return;
    branchTargets_.emplace(offset + instruction.info.length + uint64_t(target->imm.value.s), state_);
  }

  Registers registers_;
  bool is64_;
  unsigned word_;
  FrameState state_, body_;
  std::map<uint64_t, FrameState> branchTargets_; // by offset from the function's start
  bool inRelease_ = false; // in a run that began with a release
};

} // namespace

std::optional<X86FrameShape> analyzeX86Frame(std::span<const uint8_t> code, bool is64) {
  const ZydisLibrary *zydis = ZydisLibrary::forMode(is64);
  if (!zydis) return std::nullopt;
  Analysis analysis(*zydis, is64);
  for (size_t at = 0; at < code.size();) {
    auto decoded = zydis->decode(code.subspan(at));
    // An instruction that would run past the end did not decode: the address
    // is not where an instruction starts, as read from the function's start.
    if (!decoded || !analysis.step(*decoded, at)) return std::nullopt;
    at += decoded->info.length;
  }
  return analysis.shape();
}

} // namespace stackwalk
