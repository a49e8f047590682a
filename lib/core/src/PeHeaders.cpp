#include "PeHeaders.h"

#include "stackwalk/core/Fail.h"

using namespace llvm;

namespace stackwalk {
Expected<Pe32PlusHeaders> readPe32PlusHeaders(const MemorySource &memory, uint64_t base) {
  auto dos = memory.readValue<object::dos_header>(base);
  if (!dos || dos->Magic[0] != 'M' || dos->Magic[1] != 'Z') return fail("no MZ header in the dump's memory");
  Pe32PlusHeaders headers;
  headers.peOffset = dos->AddressOfNewExeHeader;
  uint64_t pe = base + headers.peOffset;
  auto signature = memory.readValue<uint32_t>(pe);
  auto file = memory.readValue<object::coff_file_header>(pe + 4);
  if (!signature || *signature != 0x4550 || !file) return fail("no PE header in the dump's memory");
  headers.file = *file;
  headers.optionalAddress = pe + 4 + sizeof(object::coff_file_header);
  auto magic = memory.readValue<uint16_t>(headers.optionalAddress);
  if (!magic || *magic != COFF::PE32Header::PE32_PLUS) return fail("not a PE32+ image");
  auto optional = memory.readValue<object::pe32plus_header>(headers.optionalAddress);
  if (!optional) return fail("an unreadable optional header");
  headers.optional = *optional;
  return headers;
}

} // namespace stackwalk
