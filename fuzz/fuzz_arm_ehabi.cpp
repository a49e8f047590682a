// ARM's exception index tables (ArmEhabi.h): the input is the .ARM.exidx
// table, the .ARM.extab entries it points into and the stack; each lookup's
// instructions are executed on a frame and described, as --unwind-info does.
#include "stackwalk/unwinder/ArmEhabi.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16) return 0;
  constexpr uint64_t Table = 0x10000, Stack = 0x20000;
  stackwalk::BufferMemory memory;
  std::vector<uint8_t> bytes(data, data + size);
  memory.add(Table, bytes); // the table, and extab entries prel31 offsets may reach
  memory.add(Stack, bytes);
  uint32_t words[4];
  std::memcpy(words, data, sizeof words);
  stackwalk::RegisterFile regs(stackwalk::Arch::Arm);
  for (unsigned reg = 0; reg < 16; ++reg) regs.set(reg, Stack + 4 * reg);
  for (uint64_t address : {uint64_t(words[0]), uint64_t(words[2]), Table + words[3] % size}) {
    auto entry = stackwalk::findArmUnwindEntry(memory, Table, size - words[1] % 16, address);
    if (!entry) continue;
    (void)stackwalk::describeArmUnwind(entry->opcodes);
    auto caller = stackwalk::executeArmUnwind(entry->opcodes, regs, memory);
    if (!caller) llvm::consumeError(caller.takeError());
  }
  return 0;
}
