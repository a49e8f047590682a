// .eh_frame / .debug_frame parsing and CFA programs: the input is a section;
// every FDE the index finds is parsed, its rows built, and described as
// --unwind-info prints it.
#include "../lib/unwinder/src/CfiDescription.h"
#include "../lib/unwinder/src/CfiSection.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  auto kind = data[0] & 1 ? stackwalk::CfiSection::Kind::DebugFrame : stackwalk::CfiSection::Kind::EhFrame;
  llvm::StringRef section(reinterpret_cast<const char *>(data + 1), size - 1);
  stackwalk::CfiSection cfi(kind, section, 0x1000, llvm::Triple::x86_64);
  for (uint64_t address : {0x0ull, 0x1000ull, 0x1010ull, 0x2000ull, 0x7fffffffull}) {
    auto entry = cfi.find(address);
    if (!entry) {
      llvm::consumeError(entry.takeError());
      continue;
    }
    std::vector<std::string> description;
    if (*entry) describeCfiEntry(description, **entry, address, stackwalk::Arch::X86_64, kind == stackwalk::CfiSection::Kind::EhFrame);
  }
  return 0;
}
