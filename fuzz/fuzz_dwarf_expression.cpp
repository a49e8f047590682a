// The DWARF expression evaluator, as CFI rules and as variable locations (pieces,
// implicit values, entry values that recurse once), with registers and memory from the input.
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
  std::span<const uint8_t> expression(data + 8, size - 8);
  auto result = stackwalk::evaluateDwarfExpression(expression, context, std::vector<uint64_t>{0x1000});
  if (!result) llvm::consumeError(result.takeError());
  // An entry value is the same expression evaluated once more, in the "caller".
  unsigned depth = 0;
  context.entryValue = [&](std::span<const uint8_t> block) -> llvm::Expected<uint64_t> {
    if (depth++ > 0) return 7;
    auto value = stackwalk::evaluateDwarfExpression(block, context);
    if (!value) return value.takeError();
    return value->value;
  };
  context.indexedAddress = [](uint64_t index) -> std::optional<uint64_t> {
    return index < 4 ? std::optional<uint64_t>(0x1000 + index * 8) : std::nullopt;
  };
  auto location = stackwalk::evaluateDwarfLocation(expression, context);
  if (!location) llvm::consumeError(location.takeError());
  return 0;
}
