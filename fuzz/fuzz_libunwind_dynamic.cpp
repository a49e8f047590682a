// libunwind's dynamic unwind info as read from a dump: the input is the
// memory holding proc-info regions and ops, or a table of FDEs, and the stack.
#include "stackwalk/unwinder/LibunwindDynamic.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 16) return 0;
  constexpr uint64_t Code = 0x5000, Info = 0x9000, Stack = 0x10000;
  auto memory = std::make_unique<stackwalk::BufferMemory>();
  std::vector<uint8_t> bytes(data, data + size);
  memory->add(Info, bytes);  // regions, or the table and its FDEs
  memory->add(Stack, bytes); // the stack
  stackwalk::Target target(stackwalk::Arch::X86_64, stackwalk::OS::Linux, "fuzz", std::move(memory));
  uint32_t words[4];
  std::memcpy(words, data, sizeof words);
  stackwalk::DynamicProcedure procedure;
  procedure.start = Code;
  procedure.end = Code + 0x100;
  procedure.format = static_cast<stackwalk::DynamicProcedure::Format>(words[0] % 3);
  procedure.regions = Info + 16;
  procedure.segbase = Info;
  procedure.tableData = Info + 16;
  procedure.tableEntries = words[0] >> 24;
  stackwalk::Frame frame;
  frame.regs = stackwalk::RegisterFile(stackwalk::Arch::X86_64);
  frame.ip = Code + words[1] % 0x100;
  frame.sp = Stack + words[2] % 0x100;
  frame.ipIsExact = words[1] & 0x100;
  frame.regs.setPc(frame.ip);
  frame.regs.setSp(frame.sp);
  frame.regs.set(6, Stack + words[3] % 0x200);
  stackwalk::LibunwindDynamicUnwinder unwinder({procedure});
  unwinder.unwind(frame, target);
  return 0;
}
