// The Linux auxiliary vector (/proc/PID/auxv): (key, value) words the kernel
// gives a process at exec, which an ELF core keeps as its NT_AUXV note and a
// Breakpad minidump as its LinuxAuxv stream, in words of the process's size.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace stackwalk {

// Auxiliary vector keys (<elf.h>; LLVM's ELF.h does not define them).
enum AuxvType : uint64_t { AT_PHDR = 3, AT_PHNUM = 5, AT_ENTRY = 9, AT_EXECFN = 31, AT_SYSINFO_EHDR = 33 };

// The pairs up to AT_NULL (or the end of the bytes), each key and value a
// little-endian word of `wordSize` (4 or 8) bytes.
std::vector<std::pair<uint64_t, uint64_t>> parseAuxv(std::span<const uint8_t> bytes, unsigned wordSize = 8);
// The first value recorded for `type`.
std::optional<uint64_t> auxvValue(const std::vector<std::pair<uint64_t, uint64_t>> &auxv, uint64_t type);

} // namespace stackwalk
