#include "stackwalk/core/PltStubs.h"

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace llvm;
using namespace llvm::object;
using llvm::support::endian::read32le;

namespace stackwalk {

namespace {

// A stub's jump found in a PLT section: where the stub starts (its landing
// pad or prefix included) and the GOT slot it jumps through.
struct StubJump {
  uint64_t start, slot;
};

// x86-64: `ff 25 rel32`, jmp *rel32(%rip), optionally after `f2` (bnd) and
// `f3 0f 1e fa` (endbr64). i386: `ff 25 abs32` (jmp *abs32) or `ff a3
// disp32` (jmp *disp32(%ebx), ebx = .got.plt), after `f3 0f 1e fb` (endbr32).
std::vector<StubJump> x86StubJumps(uint64_t address, ArrayRef<uint8_t> bytes, bool is64, uint64_t gotPlt) {
  std::vector<StubJump> jumps;
  for (size_t at = 0; at + 6 <= bytes.size();) {
    bool absoluteOrRip = bytes[at] == 0xff && bytes[at + 1] == 0x25;
    bool fromEbx = !is64 && bytes[at] == 0xff && bytes[at + 1] == 0xa3;
    if (!absoluteOrRip && !fromEbx) {
      ++at;
      continue;
    }
    int32_t operand = int32_t(read32le(&bytes[at + 2]));
    uint64_t slot = fromEbx ? gotPlt + int64_t(operand)
                    : is64  ? address + at + 6 + int64_t(operand)
                            : uint32_t(operand);
    size_t start = at;
    if (start >= 1 && bytes[start - 1] == 0xf2) --start; // bnd
    uint8_t endbr[4] = {0xf3, 0x0f, 0x1e, uint8_t(is64 ? 0xfa : 0xfb)};
    if (start >= 4 && std::equal(endbr, endbr + 4, &bytes[start - 4])) start -= 4;
    jumps.push_back({address + start, slot});
    at += 6;
  }
  return jumps;
}

// AArch64: `adrp x16, page; ldr x17, [x16, #offset]`, optionally after
// `bti c`; the slot is page + offset (then `add x16, x16, #offset; br x17`).
std::vector<StubJump> aarch64StubJumps(uint64_t address, ArrayRef<uint8_t> bytes) {
  constexpr uint32_t AdrpMask = 0x9f00001f, AdrpX16 = 0x90000010;
  constexpr uint32_t LdrMask = 0xffc003ff, LdrX17FromX16 = 0xf9400211, BtiC = 0xd503245f;
  std::vector<StubJump> jumps;
  for (size_t at = 0; at + 8 <= bytes.size(); at += 4) {
    uint32_t adrp = read32le(&bytes[at]), ldr = read32le(&bytes[at + 4]);
    if ((adrp & AdrpMask) != AdrpX16 || (ldr & LdrMask) != LdrX17FromX16) continue;
    // adrp's 21-bit signed page count: immhi (bits 5-23) above immlo (bits 29-30).
    int64_t pages = int64_t(((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3)) << 43 >> 43;
    uint64_t page = ((address + at) & ~uint64_t(0xfff)) + uint64_t(pages) * 0x1000;
    uint64_t slot = page + ((ldr >> 10) & 0xfff) * 8;
    size_t start = at >= 4 && read32le(&bytes[at - 4]) == BtiC ? at - 4 : at;
    jumps.push_back({address + start, slot});
    at += 4;
  }
  return jumps;
}

// The relocations that fill a PLT stub's GOT slot with its function's address.
bool fillsPltSlot(unsigned machine, uint32_t type) {
  switch (machine) {
  case ELF::EM_X86_64: return type == ELF::R_X86_64_JUMP_SLOT || type == ELF::R_X86_64_GLOB_DAT;
  case ELF::EM_386: return type == ELF::R_386_JUMP_SLOT || type == ELF::R_386_GLOB_DAT;
  case ELF::EM_AARCH64: return type == ELF::R_AARCH64_JUMP_SLOT || type == ELF::R_AARCH64_GLOB_DAT;
  default: return false;
  }
}

} // namespace

template <typename ELFT> class PltStubsReader {
  using Shdr = typename ELFT::Shdr;

public:
  static PltStubs read(const ELFFile<ELFT> &file) {
    PltStubs stubs;
    unsigned machine = file.getHeader().e_machine;
    bool linked = file.getHeader().e_type == ELF::ET_EXEC || file.getHeader().e_type == ELF::ET_DYN;
    if (!linked || (machine != ELF::EM_X86_64 && machine != ELF::EM_386 && machine != ELF::EM_AARCH64)) return stubs;
    auto sections = file.sections();
    if (!sections) return consumeError(sections.takeError()), stubs;
    std::optional<std::map<uint64_t, StringRef>> functionBySlot; // read when a PLT section is found
    uint64_t gotPlt = machine == ELF::EM_386 ? gotPltAddress(file, *sections) : 0; // i386's ebx
    for (const Shdr &section : *sections) {
      auto name = file.getSectionName(section);
      if (!name) consumeError(name.takeError());
      if (!name || !PltStubs::isPltSection(*name) || section.sh_type != ELF::SHT_PROGBITS) continue;
      auto contents = file.getSectionContents(section);
      if (!contents) {
        consumeError(contents.takeError());
        continue;
      }
      if (!functionBySlot) functionBySlot = slotFunctions(file, *sections);
      std::vector<StubJump> jumps =
          machine == ELF::EM_AARCH64
              ? aarch64StubJumps(section.sh_addr, *contents)
              : x86StubJumps(section.sh_addr, *contents, machine == ELF::EM_X86_64, gotPlt);
      addStubs(jumps, section.sh_addr + contents->size(), *functionBySlot, stubs.stubs_);
    }
    std::sort(stubs.stubs_.begin(), stubs.stubs_.end(),
              [](const PltStubs::Stub &a, const PltStubs::Stub &b) { return a.start < b.start; });
    return stubs;
  }

private:
  // GOT slot -> the function its JUMP_SLOT or GLOB_DAT relocation names, from
  // every relocation section (.rel[a].plt and .rel[a].dyn), read through
  // ELFFile's checked accessors.
  static std::map<uint64_t, StringRef> slotFunctions(const ELFFile<ELFT> &file, ArrayRef<Shdr> sections) {
    std::map<uint64_t, StringRef> functions;
    unsigned machine = file.getHeader().e_machine;
    for (const Shdr &section : sections) {
      if (section.sh_type != ELF::SHT_RELA && section.sh_type != ELF::SHT_REL) continue;
      auto symbols = file.getSection(section.sh_link);
      if (!symbols) {
        consumeError(symbols.takeError());
        continue;
      }
      auto strings = file.getStringTableForSymtab(**symbols, sections);
      if (!strings) {
        consumeError(strings.takeError());
        continue;
      }
      auto add = [&](const auto &relocation) {
        if (!fillsPltSlot(machine, relocation.getType(/*isMips64EL=*/false))) return;
        auto symbol = file.getRelocationSymbol(relocation, *symbols);
        if (!symbol) return consumeError(symbol.takeError());
        if (!*symbol) return; // index 0: no function
        auto name = (*symbol)->getName(*strings);
        if (!name) return consumeError(name.takeError());
        if (!name->empty()) functions.emplace(relocation.r_offset, *name);
      };
      if (section.sh_type == ELF::SHT_RELA) forEach(file.relas(section), add);
      else forEach(file.rels(section), add);
    }
    return functions;
  }

  template <typename Relocations, typename Add> static void forEach(Expected<Relocations> relocations, Add add) {
    if (!relocations) return consumeError(relocations.takeError());
    for (const auto &relocation : *relocations) add(relocation);
  }

  // i386 PIC stubs address their slots from ebx, which holds .got.plt's address.
  static uint64_t gotPltAddress(const ELFFile<ELFT> &file, ArrayRef<Shdr> sections) {
    for (const Shdr &section : sections) {
      auto name = file.getSectionName(section);
      if (!name) consumeError(name.takeError());
      else if (*name == ".got.plt") return section.sh_addr;
    }
    return 0;
  }

  // Each stub runs to the next jump's stub or the section's end. A stub whose
  // slot names no function (an IRELATIVE one) is not listed, but ends the one
  // before it.
  static void addStubs(std::vector<StubJump> &jumps, uint64_t sectionEnd,
                       const std::map<uint64_t, StringRef> &functionBySlot, std::vector<PltStubs::Stub> &out) {
    std::sort(jumps.begin(), jumps.end(), [](const StubJump &a, const StubJump &b) { return a.start < b.start; });
    for (size_t i = 0; i < jumps.size(); ++i) {
      uint64_t end = i + 1 < jumps.size() ? std::min(jumps[i + 1].start, sectionEnd) : sectionEnd;
      auto function = functionBySlot.find(jumps[i].slot);
      if (function != functionBySlot.end() && end > jumps[i].start)
        out.push_back({jumps[i].start, end, jumps[i].slot, (function->second + "@plt").str()});
    }
  }
};

PltStubs PltStubs::read(const ObjectFile &object) {
  if (const auto *elf = dyn_cast<ELF64LEObjectFile>(&object)) return PltStubsReader<ELF64LE>::read(elf->getELFFile());
  if (const auto *elf = dyn_cast<ELF32LEObjectFile>(&object)) return PltStubsReader<ELF32LE>::read(elf->getELFFile());
  return {};
}

const PltStubs::Stub *PltStubs::at(uint64_t address) const {
  auto after = std::upper_bound(stubs_.begin(), stubs_.end(), address,
                                [](uint64_t at, const Stub &stub) { return at < stub.start; });
  if (after == stubs_.begin() || address >= std::prev(after)->end) return nullptr;
  return &*std::prev(after);
}

} // namespace stackwalk
