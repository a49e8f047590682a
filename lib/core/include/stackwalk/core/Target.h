// The uniform view of a crashed process that every dump format loads into.
#pragma once

#include "stackwalk/core/FxsaveArea.h"
#include "stackwalk/core/Arch.h"
#include "stackwalk/core/DumpBudget.h"
#include "stackwalk/core/Memory.h"
#include "stackwalk/core/Module.h"
#include "stackwalk/core/Registers.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct ThreadInfo {
  uint64_t tid = 0;
  std::optional<std::string> name;
  RegisterFile context;
  std::optional<FxsaveArea> fpState; // x86-64 Linux: its x87 and SSE registers, when read
  // The dump lists the thread but records no context for it (Wine's writer
  // does so for a thread it could not suspend): not damage, so no warning.
  bool contextAbsent = false;
  std::optional<int> signal; // pending/current signal recorded for the thread
};

struct CrashInfo {
  uint64_t threadId = 0;
  std::optional<int> signal;
  std::optional<int> code;              // si_code
  std::string codeName;                  // "SEGV_MAPERR", "SI_TKILL"; an access violation's "read", "write", "execute"
  std::optional<uint64_t> exceptionCode; // Windows
  std::string name;                      // "SIGSEGV", "EXCEPTION_ACCESS_VIOLATION"
  std::optional<uint64_t> address;       // faulting address
  std::optional<uint32_t> senderPid, senderUid; // Linux: who sent a signal a process raised (si_code <= 0)
};

// A failed assertion's record (Breakpad's assertion stream): an invalid
// parameter to a C runtime function, or a pure virtual call.
struct AssertionInfo {
  std::string expression, function, file;
  uint32_t line = 0;
  std::string kind; // "invalid_parameter", "pure_virtual_call", "unknown"
};

struct ProcessInfo {
  std::optional<uint64_t> pid;
  std::string name;
  std::string commandLine;
  // Linux: the auxiliary vector (key, value) as the dump records it.
  std::vector<std::pair<uint64_t, uint64_t>> auxv;
  // A live process: how long its threads were held stopped while it was read.
  std::optional<uint64_t> pauseMicroseconds;
};

struct MemoryRegion {
  uint64_t start = 0, end = 0;
  bool readable = true, writable = false, executable = false;
};

// The region of a sorted, non-overlapping list that holds `address`, or null.
const MemoryRegion *regionContaining(std::span<const MemoryRegion> sorted, uint64_t address);

class Target : public MemorySource {
public:
  Target(Arch arch, OS os, std::string format, std::unique_ptr<MemorySource> dumpMemory)
      : arch_(arch), os_(os), format_(std::move(format)), dump_(std::move(dumpMemory)) {}

  Arch arch() const { return arch_; }
  OS os() const { return os_; }
  const std::string &format() const { return format_; }

  ProcessInfo process;
  std::optional<CrashInfo> crash;
  // Why the dump's record of the crash was not read, where it may have one:
  // the stream or notes that hold it lie outside the file or are damaged.
  // Empty when the record was read or the dump has none.
  std::string crashUnreadable;
  std::vector<ThreadInfo> threads;
  std::vector<MemoryRegion> regions; // mappings and their permissions, sorted
  std::vector<std::string> warnings;
  std::string osVersion;                          // e.g. "10.0.17134" or a kernel release
  std::vector<Module> unloadedModules;            // modules the process had unloaded
  std::vector<std::pair<std::string, std::string>> annotations; // e.g. Crashpad's
  std::optional<AssertionInfo> assertion;
  DumpBudget budget; // what this dump may make stackwalk copy out of its memory

  // Modules sorted by base; call sortModules() after changing the list.
  std::vector<Module> modules;
  void sortModules();
  const Module *moduleAt(uint64_t address) const;

  // Dump memory first; pages the dump left out are read from the module files.
  bool read(uint64_t address, std::span<uint8_t> out) const override;
  // The dump's own bytes (read() prefers them to a module file's).
  std::optional<std::span<const uint8_t>> bytesInPlace(uint64_t address, uint64_t size) const override {
    return dump_->bytesInPlace(address, size);
  }
  bool readFromDump(uint64_t address, std::span<uint8_t> out) const {
    return dump_->read(address, out);
  }

  // arm64 pointer authentication: the bits of a code pointer that hold its
  // signature (NT_ARM_PAC_MASK's insn_mask). Unset, a return address keeps
  // the low 48 bits, Linux's largest common user address space.
  std::optional<uint64_t> pointerAuthMask;
  // On arm64, where the dump records no mask (minidumps, qemu's cores): the
  // bits above the highest address it knows of (a mapping, a module, a
  // thread's sp or pc), as 39 to 48 bits. A signature begins at the process's
  // address size, which is at least that (39 bits on Android, 47 on macOS,
  // 48 on Linux): a fixed 48 left macOS's bit 47 and Android's bits 39-47 of
  // the signature in the address.
  void inferPointerAuthMask();
  // A return address as the code sees it: without a pointer-authentication
  // signature on arm64; unchanged elsewhere.
  uint64_t codeAddress(uint64_t returnAddress) const;

  const MemoryRegion *regionAt(uint64_t address) const;
  // Where the stack that holds `sp` ends: the end of the run of adjacent
  // writable mappings holding it; nullopt where the dump records no mapping
  // there. A frame's record above it is on no stack of this thread's.
  std::optional<uint64_t> stackEnd(uint64_t sp) const;
  // Executable per the dump's mapping permissions, else the module file's
  // segments, else those of the program headers the dump holds; inside a
  // module with none of these, the module's extent counts as code (nothing
  // better is known, as Breakpad and rust-minidump assume): macOS and iOS
  // minidumps, Crashpad's and Wine's have no memory-info stream.
  bool isExecutable(uint64_t address) const;
  // Whether `address` may be code that the dump does not place: it records no
  // mapping at all (no memory-info or Linux-maps stream: Breakpad's Windows and
  // macOS dumps, cores converted to minidumps) and no module holds it, so it
  // may be a JIT's. It must still be a user-space address (above the lowest a
  // system maps, 64 KiB; below the top of the architecture's user addresses)
  // that the dump holds no memory at: such dumps hold the threads' stacks and
  // code only around each thread's pc, so what they hold is a stack (_start's
  // CFI in a Breakpad symbol file reads a pushed stack pointer as its return
  // address). A JIT frame whose code another thread runs is missed, not made.
  bool mayBeUnplacedCode(uint64_t address) const;

private:
  bool readWhole(uint64_t address, std::span<uint8_t> out) const;

  Arch arch_;
  OS os_;
  std::string format_;
  std::unique_ptr<MemorySource> dump_;
};

} // namespace stackwalk
