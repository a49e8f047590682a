#include "CoreWriter.h"

#include "stackwalk/core/Fail.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/FileOutputBuffer.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string_view>

using llvm::ELF::Elf64_Ehdr;
using llvm::ELF::Elf64_Phdr;

namespace stackwalk::live {
namespace {

constexpr uint64_t PageSize = 4096;
// struct elf_prstatus and elf_prpsinfo (x86-64): the offsets CoreNotes.cpp reads.
constexpr size_t PrStatusSize = 336, PrPid = 32, PrReg = 112, UserRegsSize = 27 * 8;
constexpr size_t PrPsInfoSize = 136, PsPid = 24, PsFname = 40, PsArgs = 56;

class NoteWriter {
public:
  // name: "CORE", or "LINUX" (the kernel's name for notes of one architecture's state).
  void add(uint32_t type, const std::vector<uint8_t> &desc, std::string_view name = "CORE") {
    put32(uint32_t(name.size() + 1));
    put32(uint32_t(desc.size()));
    put32(type);
    bytes_.insert(bytes_.end(), name.begin(), name.end());
    bytes_.resize((bytes_.size() + 1 + 3) / 4 * 4, 0); // its NUL, padded to 4
    bytes_.insert(bytes_.end(), desc.begin(), desc.end());
    bytes_.resize((bytes_.size() + 3) / 4 * 4, 0);
  }
  const std::vector<uint8_t> &bytes() const { return bytes_; }

private:
  void put32(uint32_t value) { bytes_.insert(bytes_.end(), (uint8_t *)&value, (uint8_t *)&value + 4); }
  std::vector<uint8_t> bytes_;
};

template <typename T> void store(std::vector<uint8_t> &out, size_t offset, T value) {
  std::memcpy(out.data() + offset, &value, sizeof value);
}

void storeString(std::vector<uint8_t> &out, size_t offset, size_t room, const std::string &text) {
  std::memcpy(out.data() + offset, text.data(), std::min(text.size(), room - 1));
}

std::vector<uint8_t> fileNote(const std::vector<elfcore::FileMapping> &files) {
  std::vector<uint8_t> out(16 + files.size() * 24);
  store<uint64_t>(out, 0, files.size());
  store<uint64_t>(out, 8, PageSize);
  for (size_t i = 0; i < files.size(); ++i) {
    store<uint64_t>(out, 16 + i * 24, files[i].start);
    store<uint64_t>(out, 24 + i * 24, files[i].end);
    store<uint64_t>(out, 32 + i * 24, files[i].fileOffset / PageSize);
  }
  for (const elfcore::FileMapping &file : files) out.insert(out.end(), file.path.c_str(), file.path.c_str() + file.path.size() + 1);
  return out;
}

std::vector<uint8_t> notes(const CoreContents &contents) {
  NoteWriter writer;
  for (const CoreContents::Thread &thread : contents.threads) {
    std::vector<uint8_t> status(PrStatusSize, 0);
    store<uint32_t>(status, PrPid, thread.tid);
    std::memcpy(status.data() + PrReg, thread.userRegs.data(), std::min(thread.userRegs.size(), UserRegsSize));
    writer.add(elfcore::NT_PRSTATUS, status);
    if (&thread == &contents.threads.front()) {
      std::vector<uint8_t> info(PrPsInfoSize, 0);
      store<uint32_t>(info, PsPid, contents.pid);
      storeString(info, PsFname, 16, contents.name);
      storeString(info, PsArgs, 80, contents.arguments);
      writer.add(elfcore::NT_PRPSINFO, info);
      writer.add(elfcore::NT_AUXV, contents.auxv);
      writer.add(elfcore::NT_FILE, fileNote(contents.files));
    }
    // After its NT_PRSTATUS, as the kernel writes them.
    if (!thread.fpRegs.empty()) writer.add(elfcore::NT_PRFPREG, thread.fpRegs);
    if (!thread.xstate.empty()) writer.add(elfcore::NT_X86_XSTATE, thread.xstate, "LINUX");
  }
  return writer.bytes();
}

uint32_t segmentFlags(const MemoryRegion *region) {
  if (!region) return llvm::ELF::PF_R;
  uint32_t flags = 0;
  if (region->readable) flags |= llvm::ELF::PF_R;
  if (region->writable) flags |= llvm::ELF::PF_W;
  if (region->executable) flags |= llvm::ELF::PF_X;
  return flags;
}

// One PT_LOAD: pages read in one go, within one mapping, with its permissions.
struct Segment {
  uint64_t address;
  std::span<const uint8_t> bytes;
  uint32_t flags;
};

// A range read in one go may run across mappings (a module's text after its
// read-only data): it is cut at their boundaries, so that each segment has its
// own mapping's permissions; a reader takes code to be where PF_X says.
std::vector<Segment> segments(const CoreContents &contents) {
  std::vector<Segment> out;
  const std::vector<MemoryRegion> &regions = contents.regions;
  for (const CoreContents::Range &range : contents.memory) {
    uint64_t end = range.address + range.bytes.size();
    for (uint64_t at = range.address; at < end;) {
      const MemoryRegion *region = regionContaining(regions, at);
      uint64_t pieceEnd = end;
      if (region) {
        pieceEnd = std::min(end, region->end);
      } else {
        auto next = std::upper_bound(regions.begin(), regions.end(), at,
                                     [](uint64_t address, const MemoryRegion &r) { return address < r.start; });
        if (next != regions.end()) pieceEnd = std::min(end, next->start);
      }
      out.push_back({at, std::span(range.bytes).subspan(at - range.address, pieceEnd - at), segmentFlags(region)});
      at = pieceEnd;
    }
  }
  return out;
}

} // namespace

llvm::Error writeElfCore(const std::string &path, const CoreContents &contents) {
  if (contents.threads.empty()) return fail("no thread to write");
  std::vector<Segment> loads = segments(contents);
  if (loads.size() >= elfcore::PN_XNUM - 1)
    return fail("the pages read lie in " + std::to_string(loads.size()) + " segments, more than a core's " +
                "program headers can count without an extension this writer does not implement");
  std::vector<uint8_t> noteBytes = notes(contents);
  size_t headers = sizeof(Elf64_Ehdr) + (1 + loads.size()) * sizeof(Elf64_Phdr);
  uint64_t dataStart = (headers + noteBytes.size() + PageSize - 1) / PageSize * PageSize;
  uint64_t size = dataStart;
  for (const Segment &segment : loads) size += segment.bytes.size();
  auto buffer = llvm::FileOutputBuffer::create(path, size);
  if (!buffer) return fail("cannot write " + path + ": " + llvm::toString(buffer.takeError()));
  uint8_t *out = (*buffer)->getBufferStart();

  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, llvm::ELF::ElfMagic, 4);
  header.e_ident[llvm::ELF::EI_CLASS] = llvm::ELF::ELFCLASS64;
  header.e_ident[llvm::ELF::EI_DATA] = llvm::ELF::ELFDATA2LSB;
  header.e_ident[llvm::ELF::EI_VERSION] = llvm::ELF::EV_CURRENT;
  header.e_type = llvm::ELF::ET_CORE;
  header.e_machine = llvm::ELF::EM_X86_64;
  header.e_version = llvm::ELF::EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = uint16_t(1 + loads.size());
  std::memcpy(out, &header, sizeof header);

  Elf64_Phdr note{};
  note.p_type = llvm::ELF::PT_NOTE;
  note.p_offset = headers;
  note.p_filesz = noteBytes.size();
  std::memcpy(out + sizeof(Elf64_Ehdr), &note, sizeof note);
  std::memcpy(out + headers, noteBytes.data(), noteBytes.size());
  uint64_t offset = dataStart;
  for (size_t i = 0; i < loads.size(); ++i) {
    Elf64_Phdr load{};
    load.p_type = llvm::ELF::PT_LOAD;
    load.p_flags = loads[i].flags;
    load.p_offset = offset;
    load.p_vaddr = loads[i].address;
    load.p_filesz = load.p_memsz = loads[i].bytes.size();
    load.p_align = PageSize;
    std::memcpy(out + sizeof(Elf64_Ehdr) + (1 + i) * sizeof(Elf64_Phdr), &load, sizeof load);
    std::memcpy(out + offset, loads[i].bytes.data(), loads[i].bytes.size());
    offset += loads[i].bytes.size();
  }
  if (llvm::Error error = (*buffer)->commit()) return fail("cannot write " + path + ": " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

} // namespace stackwalk::live
