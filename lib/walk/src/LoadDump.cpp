#include "stackwalk/walk/LoadDump.h"

#include "stackwalk/core/Fail.h"
#include "stackwalk/elfcore/ElfCoreLoader.h"
#include "stackwalk/minidump/MicrodumpLoader.h"
#include "stackwalk/minidump/MinidumpLoader.h"

#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>
#include <cstring>
#include <span>

namespace stackwalk {
namespace {

// Why a file is not a dump, with a hint for what people mistake for one.
llvm::Error notADump(const std::string &name, std::span<const uint8_t> head) {
  bool elf = head.size() >= 18 && std::memcmp(head.data(), "\x7f" "ELF", 4) == 0;
  uint16_t type = elf ? uint16_t(head[16] | head[17] << 8) : 0; // e_type, little-endian
  if (type == llvm::ELF::ET_EXEC || type == llvm::ELF::ET_DYN)
    return fail(name + " is an executable or shared library, not a core (stackwalk takes the core; the executable "
                       "goes with -e)");
  return fail(name + " is not a dump stackwalk can read (an ELF core, a minidump or a microdump)");
}

} // namespace

llvm::Expected<std::unique_ptr<Target>> loadDump(std::unique_ptr<llvm::MemoryBuffer> bytes) {
  std::span<const uint8_t> head(reinterpret_cast<const uint8_t *>(bytes->getBufferStart()),
                                std::min<size_t>(bytes->getBufferSize(), 64));
  if (looksLikeElfCore(head)) return loadElfCore(std::move(bytes));
  if (looksLikeMinidump(head)) return loadMinidump(std::move(bytes));
  std::span<const uint8_t> all(reinterpret_cast<const uint8_t *>(bytes->getBufferStart()), bytes->getBufferSize());
  if (looksLikeMicrodump(all)) return loadMicrodump(std::move(bytes));
  return notADump(bytes->getBufferIdentifier().str(), head);
}

llvm::Expected<std::unique_ptr<Target>> loadDump(const std::string &path) {
  // Read once, so a pipe (/dev/stdin) works as well as a file; "-" is standard input.
  auto bytes = path == "-" ? llvm::MemoryBuffer::getSTDIN()
                           : llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes) return fail("cannot open " + path + ": " + bytes.getError().message());
  return loadDump(std::move(*bytes));
}

} // namespace stackwalk
