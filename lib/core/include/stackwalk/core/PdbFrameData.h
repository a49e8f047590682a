// The frame data of a 32-bit x86 PDB: its DBI stream's FrameData records
// (the "new FPO" stream MSVC and lld write, each with its program) and FPO_DATA
// records (the old stream), as llvm-pdbutil dump --fpo lists them. The same
// WindowsFrameInfo a Breakpad symbol file's STACK WIN records give, which
// dump_syms makes of these streams: a symbol server's PDB unwinds x86 code
// without a .sym file.
#pragma once

#include "stackwalk/core/WindowsFrameInfo.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class PdbFrameData {
public:
  // An error when the file is no PDB or its DBI stream cannot be read; a PDB
  // without frame data (a 64-bit one) gives an empty table.
  static llvm::Expected<std::unique_ptr<PdbFrameData>> open(const std::string &path);
  static llvm::Expected<std::unique_ptr<PdbFrameData>> read(std::unique_ptr<llvm::MemoryBuffer> bytes);

  // The record for an RVA: FrameData before FPO, and of overlapping records
  // the one that starts last (lastRecordCovering), as for STACK WIN records.
  std::optional<WindowsFrameInfo> at(uint64_t rva) const;
  size_t size() const { return frameData_.size() + fpo_.size(); }

private:
  std::vector<WindowsFrameInfo> frameData_, fpo_; // each sorted by start
};

} // namespace stackwalk
