// What the unwinder tests build their synthetic stacks from: x86-64's DWARF
// register numbers and a recognisable value for each, a frame as the walker
// makes one, a Target over hand-placed memory with its mappings and modules,
// and the registers an unwinder's result knows. (lib/frames/test's
// FakeDotnetProcess.h builds its frames and Target with these too.)
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Target.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk::synthetic {

// DWARF numbers of x86-64 registers.
constexpr unsigned Rax = 0, Rdx = 1, Rcx = 2, Rbx = 3, Rsi = 4, Rdi = 5, Rbp = 6, Rsp = 7, R12 = 12, R13 = 13,
                   R14 = 14, R15 = 15, Rip = 16;

using Status = UnwindResult::Status;

// The value a synthetic frame gives an x86-64 register, to be recognised in
// its caller: 0xaaaa rax, 0xbbbb rbx, 0xcccc rcx, 0xdddd rdx, 0xb0b0 rbp,
// 0x5151 rsi, 0xd1d1 rdi, 0x1212 to 0x1515 r12 to r15.
constexpr uint64_t recognisable(unsigned reg) {
  switch (reg) {
  case Rax: return 0xaaaa;
  case Rbx: return 0xbbbb;
  case Rcx: return 0xcccc;
  case Rdx: return 0xdddd;
  case Rbp: return 0xb0b0;
  case Rsi: return 0x5151;
  case Rdi: return 0xd1d1;
  case R12: return 0x1212;
  case R13: return 0x1313;
  case R14: return 0x1414;
  case R15: return 0x1515;
  default: return 0; // none the tests give a frame
  }
}

// Registers with pc and sp, and `recognised` at their recognisable values.
inline RegisterFile registersAt(uint64_t pc, uint64_t sp, const std::vector<unsigned> &recognised,
                                Arch arch = Arch::X86_64) {
  RegisterFile regs(arch);
  regs.setPc(pc);
  regs.setSp(sp);
  for (unsigned reg : recognised) regs.set(reg, recognisable(reg));
  return regs;
}

// A frame as the walker makes one: its ip a return address unless `trust` is
// the thread's context, its module the one of `target` at its lookup address.
inline Frame makeFrame(const Target &target, uint64_t ip, uint64_t sp, FrameTrust trust,
                       const std::vector<unsigned> &recognised, Arch arch = Arch::X86_64) {
  Frame f;
  f.trust = trust;
  f.ipIsExact = trust == FrameTrust::Context;
  f.ip = ip;
  f.sp = sp;
  f.regs = registersAt(ip, sp, recognised, arch);
  f.module = target.moduleAt(f.lookupAddress());
  return f;
}

// The registers a result knows, in DWARF order.
inline std::vector<unsigned> known(const RegisterFile &regs) {
  std::vector<unsigned> out;
  for (unsigned r = 0; r < RegisterFile::Capacity; ++r)
    if (regs.isKnown(r)) out.push_back(r);
  return out;
}

// Dump memory of these (address, bytes) ranges, added in this order.
// The headers of a PE32+ image at the start of `image`: MZ, PE, the optional
// header's magic and data directories, the exception directory (.pdata) at
// `pdataRva` with `entries` RUNTIME_FUNCTIONs.
inline void writePeHeaders(std::vector<uint8_t> &image, uint32_t pdataRva, uint32_t entries) {
  auto put32 = [&](size_t at, uint32_t value) { std::memcpy(image.data() + at, &value, 4); };
  image[0] = 'M', image[1] = 'Z';
  put32(0x3c, 0x40);
  put32(0x40, 0x4550);                                  // "PE\0\0"
  image[0x40 + 24] = 0x0b, image[0x40 + 24 + 1] = 0x02; // PE32+
  put32(0x40 + 24 + 108, 16);                           // NumberOfRvaAndSizes
  put32(0x40 + 24 + 112 + 3 * 8, pdataRva);
  put32(0x40 + 24 + 112 + 3 * 8 + 4, entries * 12);
}

inline std::unique_ptr<BufferMemory> makeMemory(std::vector<std::pair<uint64_t, std::vector<uint8_t>>> ranges) {
  auto memory = std::make_unique<BufferMemory>();
  for (auto &[address, bytes] : ranges) memory->add(address, std::move(bytes));
  return memory;
}

// A module loaded over [base, base + size), with its file if `image`.
inline Module makeModule(std::string name, uint64_t base, uint64_t size,
                         std::shared_ptr<ModuleImage> image = nullptr) {
  Module module;
  module.name = std::move(name);
  module.base = base;
  module.size = size;
  module.image = std::move(image);
  return module;
}

// A Target (format "test") over `memory` with these mappings and modules.
inline std::unique_ptr<Target> makeTarget(Arch arch, OS os, std::unique_ptr<MemorySource> memory,
                                          std::vector<MemoryRegion> regions, std::vector<Module> modules) {
  auto target = std::make_unique<Target>(arch, os, "test", std::move(memory));
  target->regions = std::move(regions);
  target->modules = std::move(modules);
  target->sortModules();
  return target;
}

// Every frame the walker gives, context first.
inline std::vector<Frame> walkAll(StackWalker &walker) {
  std::vector<Frame> frames;
  while (auto frame = walker.next()) frames.push_back(*frame);
  return frames;
}

} // namespace stackwalk::synthetic
