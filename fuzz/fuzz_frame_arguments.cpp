// Function arguments from a module file's DWARF (lib/debuginfo): the function
// chain at a pc, location expressions and lists, entry values through the
// callers' call-site records, and values formatted from their types. The
// frames are placed through the file's first code segment, their stack is the
// input's own first bytes.
#include "stackwalk/core/ModuleImage.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/debuginfo/FrameArguments.h"

#include <algorithm>

using namespace stackwalk;

namespace {

constexpr uint64_t StackBase = 0x7ff000000000;
constexpr unsigned FrameCount = 7;
constexpr unsigned DwarfRsp = 7, DwarfRip = 16;

// What the unwinder would know: every register in the innermost frame, the
// callee-saved ones (rbx, rbp, r12-r15) and sp/pc in its callers.
RegisterFile frameRegisters(unsigned index, uint64_t pc) {
  RegisterFile regs;
  for (unsigned reg = 0; reg < DwarfRip; ++reg) {
    bool calleeSaved = reg == 3 || reg == 6 || (reg >= 12 && reg <= 15);
    if (index == 0 || calleeSaved) regs.set(reg, StackBase + 64 * index + 8 * reg);
  }
  regs.set(DwarfRsp, StackBase + 256 * index);
  regs.set(DwarfRip, pc);
  return regs;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto image = ModuleImage::fromBytes(std::vector<uint8_t>(data, data + size), "fuzz");
  if (!image) {
    llvm::consumeError(image.takeError());
    return 0;
  }
  const std::vector<LoadSegment> &segments = (*image)->segments();
  auto code = std::find_if(segments.begin(), segments.end(), [](const LoadSegment &s) { return s.executable; });
  if (code == segments.end()) return 0;
  LoadSegment text = *code;

  auto memory = std::make_unique<BufferMemory>();
  memory->add(StackBase, std::vector<uint8_t>(data, data + std::min<size_t>(size, 4096)));
  Target target(Arch::X86_64, OS::Linux, "fuzz", std::move(memory));
  Module module;
  module.name = "fuzz";
  module.base = (*image)->preferredBase();
  module.size = 1 << 20;
  module.image = std::shared_ptr<ModuleImage>(std::move(*image));
  target.modules.push_back(std::move(module));
  target.sortModules();

  std::vector<Frame> frames(FrameCount);
  for (unsigned i = 0; i < FrameCount; ++i) {
    frames[i].index = i;
    frames[i].ip = text.vaddr + text.memSize * (i + 1) / (FrameCount + 1);
    frames[i].ipIsExact = i == 0;
    frames[i].regs = frameRegisters(i, frames[i].ip);
    frames[i].sp = StackBase + 256 * i;
    frames[i].module = &target.modules.front();
  }
  Symbolizer symbolizer;
  FrameArguments arguments(target, symbolizer, frames);
  for (unsigned i = FrameCount; i-- > 0;) (void)arguments.at(i); // outermost first, as the report asks
  return 0;
}
