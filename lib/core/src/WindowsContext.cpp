#include "stackwalk/core/WindowsContext.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/Endian.h"

#include <algorithm>

namespace stackwalk {
namespace {

// Where each register lives in the architecture's CONTEXT, and which
// ContextFlags group (CONTROL 1, INTEGER 2, SEGMENTS 4) holds it.
struct ContextSlot {
  unsigned reg;
  uint32_t offset;
  uint8_t size;
  uint8_t group;
};

constexpr uint32_t Control = 1, Integer = 2, Segments = 4;

constexpr ContextSlot X86_64Slots[] = {
    {51, 0x38, 2, Control},  {53, 0x3a, 2, Segments}, {50, 0x3c, 2, Segments},
    {54, 0x3e, 2, Segments}, {55, 0x40, 2, Segments}, {52, 0x42, 2, Control},
    {49, 0x44, 4, Control},  {0, 0x78, 8, Integer},   {2, 0x80, 8, Integer},
    {1, 0x88, 8, Integer},   {3, 0x90, 8, Integer},   {7, 0x98, 8, Control},
    {6, 0xa0, 8, Integer},   {4, 0xa8, 8, Integer},   {5, 0xb0, 8, Integer},
    {8, 0xb8, 8, Integer},   {9, 0xc0, 8, Integer},   {10, 0xc8, 8, Integer},
    {11, 0xd0, 8, Integer},  {12, 0xd8, 8, Integer},  {13, 0xe0, 8, Integer},
    {14, 0xe8, 8, Integer},  {15, 0xf0, 8, Integer},  {16, 0xf8, 8, Control},
};

constexpr ContextSlot X86Slots[] = {
    {45, 0x8c, 4, Segments}, {44, 0x90, 4, Segments}, {40, 0x94, 4, Segments},
    {43, 0x98, 4, Segments}, {7, 0x9c, 4, Integer},   {6, 0xa0, 4, Integer},
    {3, 0xa4, 4, Integer},   {2, 0xa8, 4, Integer},   {1, 0xac, 4, Integer},
    {0, 0xb0, 4, Integer},   {5, 0xb4, 4, Control},   {8, 0xb8, 4, Control},
    {41, 0xbc, 4, Control},  {9, 0xc0, 4, Control},   {4, 0xc4, 4, Control},
    {42, 0xc8, 4, Control},
};

struct ContextLayout {
  uint32_t size;
  uint32_t flagsOffset;
  uint32_t archFlag;
  std::vector<ContextSlot> slots;
};

ContextLayout arm64Layout() {
  ContextLayout layout{0x390, 0x0, 0x400000, {}};
  layout.slots.push_back({33, 0x4, 4, Control});
  for (unsigned i = 0; i <= 28; ++i) layout.slots.push_back({i, 0x8 + 8 * i, 8, Integer});
  layout.slots.push_back({29, 0xf0, 8, Control});
  layout.slots.push_back({30, 0xf8, 8, Control});
  layout.slots.push_back({31, 0x100, 8, Control});
  layout.slots.push_back({32, 0x108, 8, Control});
  return layout;
}

// CONTEXT_ARM (Windows on 32-bit ARM, Thumb-2 code): r0-r12 are the integer
// group, sp, lr, pc and cpsr the control group; the VFP and debug registers
// follow them.
ContextLayout armLayout() {
  ContextLayout layout{0x1a0, 0x0, 0x200000, {}};
  for (unsigned i = 0; i <= 12; ++i) layout.slots.push_back({i, 0x4 + 4 * i, 4, Integer});
  layout.slots.push_back({13, 0x38, 4, Control});
  layout.slots.push_back({14, 0x3c, 4, Control});
  layout.slots.push_back({15, 0x40, 4, Control});
  layout.slots.push_back({ArmCpsr, 0x44, 4, Control});
  return layout;
}

const ContextLayout *layoutFor(Arch arch) {
  static const ContextLayout X86_64{0x4d0, 0x30, 0x100000, {std::begin(X86_64Slots), std::end(X86_64Slots)}};
  static const ContextLayout X86{0x2cc, 0x0, 0x10000, {std::begin(X86Slots), std::end(X86Slots)}};
  static const ContextLayout Arm64 = arm64Layout();
  static const ContextLayout Arm = armLayout();
  switch (arch) {
  case Arch::X86_64: return &X86_64;
  case Arch::X86: return &X86;
  case Arch::Arm64: return &Arm64;
  case Arch::Arm: return &Arm;
  case Arch::Unknown: break;
  }
  return nullptr;
}

uint64_t readLE(const uint8_t *p, unsigned size) {
  uint64_t v = 0;
  for (unsigned i = 0; i < size; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

void writeLE(uint8_t *p, unsigned size, uint64_t v) {
  for (unsigned i = 0; i < size; ++i) p[i] = uint8_t(v >> (8 * i));
}

} // namespace

size_t windowsContextSize(Arch arch) {
  const ContextLayout *layout = layoutFor(arch);
  return layout ? layout->size : 0;
}

std::vector<uint8_t> toWindowsContext(const RegisterFile &regs) {
  const ContextLayout *layout = layoutFor(regs.arch());
  if (!layout) return {};
  std::vector<uint8_t> out(layout->size, 0);
  uint32_t groupsSeen = 0, groupsIncomplete = 0;
  for (const ContextSlot &slot : layout->slots) {
    groupsSeen |= slot.group;
    if (auto v = regs.get(slot.reg))
      writeLE(&out[slot.offset], slot.size, *v);
    else
      groupsIncomplete |= slot.group;
  }
  // A group is claimed only when every register in it is known, so a reader
  // never takes a zero for a value.
  uint32_t flags = layout->archFlag | (groupsSeen & ~groupsIncomplete);
  writeLE(&out[layout->flagsOffset], 4, flags);
  return out;
}

std::optional<FxsaveArea> fpStateFromWindowsContext(Arch arch, std::span<const uint8_t> bytes) {
  constexpr uint32_t FloatingPoint = 8;
  constexpr size_t FltSave = 0x100;
  const ContextLayout *layout = layoutFor(arch);
  if (arch != Arch::X86_64 || !layout || bytes.size() < FltSave + FxsaveArea::Size) return std::nullopt;
  uint32_t flags = uint32_t(readLE(&bytes[layout->flagsOffset], 4));
  if (!(flags & layout->archFlag) || !(flags & FloatingPoint)) return std::nullopt;
  return FxsaveArea::parse(bytes.subspan(FltSave, FxsaveArea::Size));
}

llvm::Expected<RegisterFile> fromWindowsContext(Arch arch, std::span<const uint8_t> bytes) {
  const ContextLayout *layout = layoutFor(arch);
  if (!layout) return fail("no CONTEXT layout for this architecture");
  // Other writers' contexts may end early (lldb's x86-64 CONTEXT has 720
  // bytes, Breakpad's old arm64 one 796): what holds the integer and control
  // registers is enough; the rest (floating point, vector) is unknown.
  uint32_t needed = 0;
  for (const ContextSlot &slot : layout->slots) needed = std::max(needed, slot.offset + slot.size);
  if (bytes.size() < needed)
    return fail("CONTEXT of " + llvm::Twine(bytes.size()) + " bytes is shorter than its registers (" +
                llvm::Twine(needed) + " bytes)");
  uint32_t flags = uint32_t(readLE(&bytes[layout->flagsOffset], 4));
  // Breakpad's macOS writer sets only the architecture's bit (0x00100000)
  // and writes every register: no group named means none left out.
  if ((flags & layout->archFlag) && !(flags & (Control | Integer | Segments))) flags |= Control | Integer | Segments;
  RegisterFile regs(arch);
  for (const ContextSlot &slot : layout->slots)
    if (flags & slot.group) regs.set(slot.reg, readLE(&bytes[slot.offset], slot.size));
  return regs;
}

} // namespace stackwalk
