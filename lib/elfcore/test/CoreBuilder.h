// Builds small ELF core files byte by byte, for tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace stackwalk::test {

struct Bytes : std::vector<uint8_t> {
  template <typename T> void put(T v) {
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    insert(end(), raw, raw + sizeof(T));
  }
  void pad(size_t alignment) {
    while (size() % alignment) push_back(0);
  }
  template <typename T> void set(size_t offset, T v) { std::memcpy(data() + offset, &v, sizeof(T)); }
};

struct NoteSpec {
  std::string name;
  uint32_t type;
  Bytes desc;
};

struct LoadSpec {
  uint64_t vaddr;
  Bytes bytes;
  uint64_t memSize; // >= bytes.size()
  uint32_t flags;   // PF_R 4, PF_W 2, PF_X 1
};

// x86-64 NT_PRSTATUS: pr_cursig at 12, pr_pid at 32, pr_reg (27 x u64) at 112.
inline Bytes prstatus(uint32_t tid, uint64_t rip, uint64_t rsp, uint64_t rbp = 0, int16_t signal = 0) {
  Bytes b;
  b.resize(336);
  b.set<int16_t>(12, signal);
  b.set<uint32_t>(32, tid);
  b.set<uint64_t>(112 + 4 * 8, rbp);
  b.set<uint64_t>(112 + 16 * 8, rip);
  b.set<uint64_t>(112 + 19 * 8, rsp);
  return b;
}

// Lays out: ELF header, program headers (PT_NOTE first), notes, loads.
// With `xnum`, e_phnum is PN_XNUM and section header 0 carries the count.
inline Bytes buildCore(const std::vector<NoteSpec> &notes, const std::vector<LoadSpec> &loads, bool xnum = false) {
  Bytes notesBytes;
  for (const NoteSpec &note : notes) {
    notesBytes.put<uint32_t>(uint32_t(note.name.size() + 1));
    notesBytes.put<uint32_t>(uint32_t(note.desc.size()));
    notesBytes.put<uint32_t>(note.type);
    notesBytes.insert(notesBytes.end(), note.name.begin(), note.name.end());
    notesBytes.push_back(0);
    notesBytes.pad(4);
    notesBytes.insert(notesBytes.end(), note.desc.begin(), note.desc.end());
    notesBytes.pad(4);
  }
  uint16_t phnum = uint16_t(1 + loads.size());
  uint64_t phoff = 64, notesOffset = phoff + 56 * phnum;
  uint64_t dataOffset = notesOffset + notesBytes.size();
  Bytes out;
  const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  out.insert(out.end(), ident, ident + 16);
  out.put<uint16_t>(4);  // ET_CORE
  out.put<uint16_t>(62); // EM_X86_64
  out.put<uint32_t>(1);
  out.put<uint64_t>(0);
  out.put<uint64_t>(phoff);
  out.put<uint64_t>(0); // e_shoff, patched below for xnum
  out.put<uint32_t>(0);
  out.put<uint16_t>(64);
  out.put<uint16_t>(56);
  out.put<uint16_t>(xnum ? 0xffff : phnum);
  out.put<uint16_t>(64);
  out.put<uint16_t>(xnum ? 1 : 0);
  out.put<uint16_t>(0);
  auto phdr = [&](uint32_t type, uint32_t flags, uint64_t offset, uint64_t vaddr, uint64_t filesz, uint64_t memsz) {
    out.put(type);
    out.put(flags);
    out.put(offset);
    out.put(vaddr);
    out.put<uint64_t>(0);
    out.put(filesz);
    out.put(memsz);
    out.put<uint64_t>(0);
  };
  phdr(4, 0, notesOffset, 0, notesBytes.size(), 0);
  uint64_t offset = dataOffset;
  for (const LoadSpec &load : loads) {
    phdr(1, load.flags, offset, load.vaddr, load.bytes.size(), load.memSize);
    offset += load.bytes.size();
  }
  out.insert(out.end(), notesBytes.begin(), notesBytes.end());
  for (const LoadSpec &load : loads) out.insert(out.end(), load.bytes.begin(), load.bytes.end());
  if (xnum) {
    out.set<uint64_t>(40, out.size()); // e_shoff: section header 0 follows
    Bytes section;
    section.resize(64);
    section.set<uint32_t>(44, phnum); // sh_info
    out.insert(out.end(), section.begin(), section.end());
  }
  return out;
}

} // namespace stackwalk::test
