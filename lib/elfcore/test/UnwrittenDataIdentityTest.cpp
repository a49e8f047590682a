// A static executable checked by the RELRO data a qemu-user core holds of it.
#include "stackwalk/elfcore/UnwrittenDataIdentity.h"

#include "llvm/BinaryFormat/ELF.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace stackwalk;
using namespace stackwalk::elfcore;

namespace {

constexpr uint64_t Relro = 0x48c000, RelroOffset = 0x1000, RelroWords = 256;

template <typename T> void append(std::vector<uint8_t> &bytes, const T &value) {
  const auto *raw = reinterpret_cast<const uint8_t *>(&value);
  bytes.insert(bytes.end(), raw, raw + sizeof value);
}

// The RELRO words of the executable: pointers, as a linker leaves them.
std::vector<uint8_t> relroData() {
  std::vector<uint8_t> data;
  for (uint64_t i = 0; i < RelroWords; ++i) append(data, 0x400000 + i * 0x1d8);
  return data;
}

// An arm64 ET_EXEC file: one writable PT_LOAD whose first part is RELRO.
std::vector<uint8_t> staticExecutable() {
  using namespace llvm::ELF;
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ElfMagic, 4);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_EXEC;
  header.e_machine = EM_AARCH64;
  header.e_version = EV_CURRENT;
  header.e_entry = 0x400580;
  header.e_phoff = sizeof header;
  header.e_ehsize = sizeof header;
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 2;
  Elf64_Phdr load{}, relro{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R | PF_W;
  load.p_offset = RelroOffset;
  load.p_vaddr = load.p_paddr = Relro;
  load.p_filesz = load.p_memsz = RelroWords * 8;
  relro = load;
  relro.p_type = PT_GNU_RELRO;
  relro.p_flags = PF_R;
  std::vector<uint8_t> file;
  append(file, header);
  append(file, load);
  append(file, relro);
  file.resize(RelroOffset);
  std::vector<uint8_t> data = relroData();
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

// What the check says of a core holding the RELRO words with `changed` of them
// written since (none held when `held` is false).
std::optional<std::string> mismatchWith(unsigned changed, bool held = true) {
  auto memory = std::make_unique<BufferMemory>();
  std::vector<uint8_t> loaded = relroData();
  for (unsigned i = 0; i < changed; ++i) loaded[i * 8 * (RelroWords / changed)] ^= 0xff;
  if (held) memory->add(Relro, loaded);
  Target target(Arch::Arm64, OS::Linux, "elf-core", std::move(memory));
  auto image = ModuleImage::fromBytes(staticExecutable(), "static-program");
  REQUIRE(static_cast<bool>(image));
  return unwrittenDataMismatch(target, **image, 0);
}

} // namespace

TEST_CASE("a static executable whose RELRO data the core holds, a few words written by its start-up, is the dump's") {
  CHECK(mismatchWith(0) == std::nullopt);
  CHECK(mismatchWith(2) == std::nullopt); // glibc's start-up writes some before it protects them
}

TEST_CASE("a static executable whose RELRO data differs in many words, or which the core does not hold, is refused") {
  CHECK(mismatchWith(64) == "64 of 256 words of its read-only data differ from the dump's");
  CHECK(mismatchWith(0, /*held=*/false) == "the dump holds 0 words of its read-only data, too few to compare");
}
