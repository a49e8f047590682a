// A PE32+ image's function table (its exception directory, .pdata): which
// RUNTIME_FUNCTION covers an address, and where the function of a fragment
// starts. Read through a MemorySource, so that one reading serves an image in
// a dump's memory (the Windows x64 unwinder) and an image file (the
// symbolizer). LLVM has the structures (llvm/Support/Win64EH.h) and its COFF
// dumper prints the table, but offers no lookup.
#pragma once

#include "stackwalk/core/Memory.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace stackwalk {

struct RuntimeFunction {
  uint32_t begin = 0, end = 0, unwindInfo = 0; // RVAs
};

class Win64FunctionTable {
public:
  // From the PE headers at imageBase; nullopt when they are not a PE32+
  // image's or name no exception directory.
  static std::optional<Win64FunctionTable> read(const MemorySource &memory, uint64_t imageBase);

  // The entry whose range holds `rva`; nullopt when none does (a leaf
  // function, or no code). An error when the table cannot be read.
  llvm::Expected<std::optional<RuntimeFunction>> entryCovering(const MemorySource &memory, uint64_t rva) const;
  // The RVA where the function an entry belongs to starts: a fragment's
  // entry (indirect, or with chained unwind info) leads to the function's
  // first entry.
  llvm::Expected<uint32_t> functionStart(const MemorySource &memory, RuntimeFunction entry) const;

private:
  Win64FunctionTable(uint64_t imageBase, uint32_t rva, uint32_t size) : imageBase_(imageBase), rva_(rva), size_(size) {}
  llvm::Expected<RuntimeFunction> entryAt(const MemorySource &memory, uint64_t address) const;

  uint64_t imageBase_;
  uint32_t rva_, size_;
};

} // namespace stackwalk
