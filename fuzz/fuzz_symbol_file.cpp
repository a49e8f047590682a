// Breakpad symbol files: the index made at open, every lookup (functions,
// lines, both INLINE forms, PUBLIC symbols, STACK CFI deltas, STACK WIN
// records, parameter sizes) and the STACK CFI and STACK WIN unwinders
// evaluating the rules and programs found, on a stack of the input's bytes;
// the index as --symbol-cache keeps it, read back with one byte changed.
#include "stackwalk/core/BreakpadSymbolFile.h"
#include "stackwalk/unwinder/StackWinUnwinder.h"
#include "stackwalk/unwinder/SymbolFileCfiUnwinder.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto file = stackwalk::BreakpadSymbolFile::parse(llvm::MemoryBuffer::getMemBufferCopy(text), "fuzz.sym");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  std::shared_ptr<const stackwalk::BreakpadSymbolFile> symbols(std::move(*file));
  std::vector<uint8_t> index = symbols->serializedIndex();
  index[size % index.size()] ^= uint8_t(data[0] | 1);
  auto reread = stackwalk::BreakpadSymbolFile::withIndex(llvm::MemoryBuffer::getMemBufferCopy(text), "fuzz.sym", index);
  if (reread) {
    for (uint64_t offset : {uint64_t(0), uint64_t(0x1000), uint64_t(size)}) {
      (void)(*reread)->frames(offset);
      (void)(*reread)->cfiRules(offset);
      (void)(*reread)->windowsFrameInfo(offset);
    }
  } else {
    llvm::consumeError(reread.takeError());
  }
  constexpr uint64_t Base = 0x400000, Stack = 0x7000;
  auto makeTarget = [&](stackwalk::Arch arch) {
    auto memory = std::make_unique<stackwalk::BufferMemory>();
    memory->add(Stack, std::vector<uint8_t>(data, data + std::min<size_t>(size, 256)));
    auto target = std::make_unique<stackwalk::Target>(arch, stackwalk::OS::Linux, "fuzz", std::move(memory));
    stackwalk::Module module;
    module.name = "fuzz";
    module.base = Base;
    module.size = 1ull << 32;
    module.symbolFile = symbols;
    target->modules.push_back(module);
    return target;
  };
  auto x64 = makeTarget(stackwalk::Arch::X86_64), x86 = makeTarget(stackwalk::Arch::X86);
  stackwalk::SymbolFileCfiUnwinder cfi;
  stackwalk::StackWinUnwinder stackWin;
  // Offsets the file's own records name, and a few fixed ones.
  for (uint64_t offset : {uint64_t(0), uint64_t(0x10), uint64_t(0x1000), uint64_t(size), ~uint64_t(0)}) {
    (void)symbols->frames(offset);
    (void)symbols->cfiRules(offset);
    (void)symbols->windowsFrameInfo(offset);
    (void)symbols->parameterSize(offset);
    (void)symbols->describesCodeAt(offset);
    (void)symbols->startsFunctionAt(offset);
    for (auto [target, unwinder] : {std::pair<stackwalk::Target *, stackwalk::Unwinder *>{x64.get(), &cfi},
                                    std::pair<stackwalk::Target *, stackwalk::Unwinder *>{x86.get(), &stackWin}}) {
      stackwalk::Frame frame;
      frame.regs = stackwalk::RegisterFile(target->arch());
      frame.ip = Base + offset;
      frame.sp = Stack;
      frame.calleeArgumentBytes = size % 64;
      frame.regs.setPc(frame.ip);
      frame.regs.setSp(Stack);
      frame.regs.set(frame.regs.fpRegister(), Stack + 8);
      frame.module = &target->modules.front();
      (void)unwinder->unwind(frame, *target);
    }
  }
  return 0;
}
