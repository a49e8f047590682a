// The DWARF expression evaluator, with registers and memory from the input.
#include "stackwalk/core/DwarfExpression.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16) return 0;
  stackwalk::BufferMemory memory;
  memory.add(0x1000, std::vector<uint8_t>(data, data + std::min<size_t>(size, 256)));
  stackwalk::RegisterFile regs(stackwalk::Arch::X86_64);
  uint64_t value;
  std::memcpy(&value, data, 8);
  for (unsigned reg = 0; reg < 17; reg += 2) regs.set(reg, value + reg * 8);
  stackwalk::DwarfExpressionContext context;
  context.memory = &memory;
  context.registers = &regs;
  context.cfa = 0x1000;
  context.frameBase = 0x1008;
  auto result = stackwalk::evaluateDwarfExpression({data + 8, size - 8}, context, std::vector<uint64_t>{0x1000});
  if (!result) llvm::consumeError(result.takeError());
  return 0;
}
