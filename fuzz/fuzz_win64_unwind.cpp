// The Win64 unwind-code interpreters, x64's and ARM64's: the input supplies
// UNWIND_INFO or .xdata (or ARM64's packed data), code bytes and the stack,
// and the frame's registers; x64's also for a frame at a call without its
// frame register (unwindWin64AtCall's guess); then --unwind-info's description,
// with the input also as the image's PE headers and .pdata.
#include "stackwalk/unwinder/Arm64WindowsUnwind.h"
#include "stackwalk/unwinder/UnwindDescription.h"
#include "stackwalk/unwinder/Win64Unwind.h"

#include <cstring>
#include <memory>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 32) return 0;
  constexpr uint64_t Base = 0x140000000;
  stackwalk::BufferMemory memory;
  std::vector<uint8_t> bytes(data, data + size);
  memory.add(Base + 0x1000, bytes); // code
  memory.add(Base + 0x2000, bytes); // unwind info and chained entries
  memory.add(0x10000, bytes);       // stack
  memory.add(Base, bytes);          // PE headers, the exception directory
  stackwalk::Target target(stackwalk::Arch::X86_64, stackwalk::OS::Windows, "fuzz",
                           std::make_unique<stackwalk::BufferMemory>(memory));
  uint32_t words[4];
  std::memcpy(words, data, sizeof words);
  stackwalk::Frame frame;
  frame.regs = stackwalk::RegisterFile(stackwalk::Arch::X86_64);
  frame.ip = Base + 0x1000 + (words[0] % 0x100);
  frame.sp = 0x10000 + (words[1] % 0x100);
  frame.ipIsExact = words[2] & 1;
  frame.regs.setPc(frame.ip);
  frame.regs.setSp(frame.sp);
  frame.regs.set(6, 0x10000 + (words[3] % 0x200));
  stackwalk::RuntimeFunction function{0x1000, 0x1000 + (words[2] >> 8) % 0x200, 0x2000 + (words[3] >> 16) % 0x40};
  auto result = stackwalk::unwindWin64(memory, Base, function, frame);
  if (!result) llvm::consumeError(result.takeError());
  stackwalk::Frame atCall = frame;
  atCall.ipIsExact = false;
  atCall.regs = stackwalk::RegisterFile(stackwalk::Arch::X86_64);
  atCall.regs.setPc(frame.ip);
  atCall.regs.setSp(frame.sp);
  auto guessed = stackwalk::unwindWin64AtCall(target, Base, function, atCall);
  if (!guessed) llvm::consumeError(guessed.takeError());
  // ARM64: the same bytes as .xdata (or the fourth word as packed data), x29 and lr known.
  stackwalk::Frame arm64 = frame;
  arm64.regs = stackwalk::RegisterFile(stackwalk::Arch::Arm64);
  arm64.regs.setPc(frame.ip);
  arm64.regs.setSp(frame.sp);
  arm64.regs.set(29, 0x10000 + (words[3] % 0x200));
  arm64.regs.set(30, Base + 0x1000 + (words[1] >> 8) % 0x100);
  stackwalk::RuntimeFunction arm64Function{0x1000, function.end, words[3] & 3 ? words[3] : function.unwindInfo};
  auto arm64Result = stackwalk::unwindArm64Windows(memory, Base, arm64Function, arm64);
  if (!arm64Result) llvm::consumeError(arm64Result.takeError());
  auto description = stackwalk::describeWin64Unwind(memory, Base, frame.ip);
  if (!description) llvm::consumeError(description.takeError());
  auto arm64Description = stackwalk::describeArm64Unwind(memory, Base, frame.ip);
  if (!arm64Description) llvm::consumeError(arm64Description.takeError());
  return 0;
}
