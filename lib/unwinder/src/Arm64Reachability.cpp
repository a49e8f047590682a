#include "Arm64Reachability.h"

#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Target.h"

#include "llvm/Support/MathExtras.h"

#include <unordered_set>
#include <vector>

namespace stackwalk {

namespace {

// Enough for the functions a frame without unwind tables calls (busybox's
// largest reach a few thousand instructions); past it, nothing is said.
constexpr size_t MaxInstructions = 8192;

enum class Flow {
  Next,        // any other instruction, and calls, which return here
  Jump,        // b: only to its target
  Branch,      // b.cond, cbz/cbnz, tbz/tbnz: to its target or the next
  End,         // ret, or a trap (brk, hlt): the path ends
  Indirect,    // br and the other register branches: anywhere; or no code
};

struct Decoded {
  Flow flow;
  uint64_t target = 0;
};

Decoded decode(uint32_t insn, uint64_t at) {
  auto relative = [&](unsigned lowBit, unsigned bits) {
    return at + uint64_t(llvm::SignExtend64((insn >> lowBit) & ((1u << bits) - 1), bits) * 4);
  };
  if ((insn & 0xfc000000) == 0x14000000) return {Flow::Jump, relative(0, 26)};     // b
  if ((insn & 0xfc000000) == 0x94000000) return {Flow::Next};                      // bl
  if ((insn & 0xff000000) == 0x54000000) return {Flow::Branch, relative(5, 19)};   // b.cond, bc.cond
  if ((insn & 0x7e000000) == 0x34000000) return {Flow::Branch, relative(5, 19)};   // cbz, cbnz
  if ((insn & 0x7e000000) == 0x36000000) return {Flow::Branch, relative(5, 14)};   // tbz, tbnz
  if ((insn & 0xfe000000) == 0xd6000000) {                                         // branch to register
    unsigned opc = (insn >> 21) & 0xf;
    if (opc == 1) return {Flow::Next}; // blr, blraaz, blrabz: a call
    if (opc == 2) return {Flow::End};  // ret, retaa, retab
    return {Flow::Indirect};           // br, braa..., eret; blraa and blrab too (not told, as a jump)
  }
  // brk and hlt end a path (__builtin_trap); udf (zeros, mostly) is no code to follow.
  if ((insn & 0xffe0001f) == 0xd4200000 || (insn & 0xffe0001f) == 0xd4400000) return {Flow::End};
  if ((insn & 0xffff0000) == 0) return {Flow::Indirect};
  return {Flow::Next};
}

// Where a PLT stub's jump goes: the function its GOT slot holds in the dump,
// in another module. A slot not bound yet holds the PLT's header (the
// dynamic linker's resolver, which goes anywhere), and a module's own
// function called through its PLT is not followed: both are not told.
std::optional<uint64_t> pltStubTarget(const Target &target, uint64_t at) {
  const Module *module = target.moduleAt(at);
  if (!module || !module->image) return std::nullopt;
  const PltStubs::Stub *stub = module->image->pltStubs().at(at - module->loadBias());
  if (!stub) return std::nullopt;
  auto function = target.readPointer(stub->slot + module->loadBias(), 8);
  if (!function || target.moduleAt(*function) == module) return std::nullopt;
  return *function;
}

} // namespace

std::optional<bool> arm64MayReach(const Target &target, uint64_t entry, uint64_t pc) {
  std::vector<uint64_t> pending{entry};
  std::unordered_set<uint64_t> seen;
  while (!pending.empty()) {
    uint64_t at = pending.back();
    pending.pop_back();
    while (seen.insert(at).second) {
      if (at == pc) return true;
      if (seen.size() > MaxInstructions) return std::nullopt;
      auto insn = target.readValue<uint32_t>(at);
      if (!insn) return std::nullopt;
      Decoded next = decode(*insn, at);
      if (next.flow == Flow::End) break;
      if (next.flow == Flow::Indirect) {
        auto function = pltStubTarget(target, at);
        if (!function) return std::nullopt;
        at = *function;
        continue;
      }
      if (next.flow == Flow::Branch) pending.push_back(next.target);
      at = next.flow == Flow::Jump ? next.target : at + 4;
    }
  }
  return false;
}

} // namespace stackwalk
