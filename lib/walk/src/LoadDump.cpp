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

llvm::Expected<std::unique_ptr<Target>> loadDump(std::shared_ptr<const DumpFile> file) {
  std::span<const uint8_t> all = file->bytes(), head = all.first(std::min<size_t>(all.size(), 64));
  if (looksLikeElfCore(head)) return loadElfCore(std::move(file));
  if (looksLikeMinidump(head)) return loadMinidump(std::move(file));
  if (looksLikeMicrodump(all)) return loadMicrodump(file->buffer().getBuffer());
  return notADump(file->buffer().getBufferIdentifier().str(), head);
}

llvm::Expected<std::unique_ptr<Target>> loadDump(const std::string &path) {
  auto file = DumpFile::open(path);
  if (!file) return file.takeError();
  return loadDump(std::move(*file));
}

} // namespace stackwalk
