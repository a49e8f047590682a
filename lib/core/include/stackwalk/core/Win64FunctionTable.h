// A PE32+ image's function table (its exception directory, .pdata; x64's or
// ARM64's, by the machine in its file header): which
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

// x64: BeginAddress, EndAddress, UnwindInfo (RVAs). ARM64 records no end:
// its entry is BeginAddress and UnwindData (an .xdata RVA, or packed unwind
// data when its low two bits are not 0), and `end` is derived from the
// function length either holds.
struct RuntimeFunction {
  uint32_t begin = 0, end = 0, unwindInfo = 0;
};

// An ARM64 function's length in bytes, from its packed unwind data or the
// header of its .xdata record at imageBase + unwindData.
llvm::Expected<uint32_t> arm64FunctionLength(const MemorySource &memory, uint64_t imageBase, uint32_t unwindData);

class Win64FunctionTable;

// The RUNTIME_FUNCTION of the image at imageBase that covers `address`, read
// through a table made for the one lookup (--unwind-info's); nullopt when none
// does. An error when the image has no readable exception directory.
llvm::Expected<std::optional<RuntimeFunction>> runtimeFunctionCovering(const MemorySource &memory,
                                                                       uint64_t imageBase, uint64_t address);

class Win64FunctionTable {
public:
  // From the PE headers at imageBase; an error saying why when they are not a
  // PE32+ image's or name no exception directory.
  static llvm::Expected<Win64FunctionTable> read(const MemorySource &memory, uint64_t imageBase);

  // The entry whose range holds `rva`; nullopt when none does (a leaf
  // function, or no code). An error when the table cannot be read.
  llvm::Expected<std::optional<RuntimeFunction>> entryCovering(const MemorySource &memory, uint64_t rva) const;
  // The RVA where the function an entry belongs to starts: a fragment's
  // entry (indirect, or with chained unwind info) leads to the function's
  // first entry.
  llvm::Expected<uint32_t> functionStart(const MemorySource &memory, RuntimeFunction entry) const;

private:
  Win64FunctionTable(uint64_t imageBase, uint32_t rva, uint32_t size, bool arm64)
      : imageBase_(imageBase), rva_(rva), size_(size), arm64_(arm64) {}
  uint64_t entrySize() const { return arm64_ ? 8 : 12; }
  llvm::Expected<RuntimeFunction> entryAt(const MemorySource &memory, uint64_t address) const;

  uint64_t imageBase_;
  uint32_t rva_, size_;
  bool arm64_; // IMAGE_FILE_MACHINE_ARM64's two-word entries
};

} // namespace stackwalk
