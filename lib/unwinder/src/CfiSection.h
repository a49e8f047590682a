// One section of DWARF call frame information (.eh_frame or .debug_frame) of a
// module image: finds the FDE for an address and its table of unwind rows.
//
// The pc -> FDE lookup (through .eh_frame_hdr's sorted table, or an index built
// once by walking the section) and the CIE/FDE headers are ours: LLVM's
// DWARFDebugFrame only parses a whole section eagerly. The CFA programs are
// interpreted by LLVM's CFIProgram and UnwindTable, which know every DW_CFA
// operation.
#pragma once

#include "stackwalk/core/StackWalker.h"

#include "llvm/DebugInfo/DWARF/DWARFDebugFrame.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class CfiSection {
public:
  enum class Kind { EhFrame, DebugFrame };

  struct Entry {
    std::unique_ptr<llvm::dwarf::FDE> fde;
    llvm::dwarf::UnwindTable table;
    bool signalFrame = false; // the CIE's augmentation has 'S'
    uint64_t returnAddressRegister = 0;
  };

  // `data` and `hdr` must outlive the section (they point into a mapped image).
  CfiSection(Kind kind, llvm::StringRef data, uint64_t address, llvm::Triple::ArchType arch,
             llvm::StringRef hdr = {}, uint64_t hdrAddress = 0);
  ~CfiSection();

  // The FDE covering a file address, or nullptr. Errors describe damaged CFI.
  llvm::Expected<const Entry *> find(uint64_t address);

private:
  struct Range {
    uint64_t begin, end, offset;
  };
  struct FdeHeader;

  bool hasUsableHdr() const;
  std::optional<uint64_t> lookupHdr(uint64_t address) const;
  std::optional<uint64_t> lookupIndex(uint64_t address);
  llvm::Expected<FdeHeader> parseFdeHeader(uint64_t offset);
  // Parses a CIE's or FDE's instructions, rewriting what LLVM cannot parse.
  llvm::Error parseProgram(llvm::dwarf::CFIProgram &program, uint64_t entryOffset, uint64_t begin, uint64_t end);
  llvm::Expected<llvm::dwarf::CIE *> cieAt(uint64_t offset);
  void buildIndex();

  Kind kind_;
  llvm::StringRef data_;
  uint64_t address_;
  llvm::Triple::ArchType arch_;
  uint8_t addressSize_;
  llvm::StringRef hdr_;
  uint64_t hdrAddress_;
  std::optional<std::vector<Range>> index_; // built on first use without a usable hdr
  std::string unindexed_;                   // why the index ends early, if it does
  std::map<uint64_t, std::unique_ptr<llvm::dwarf::CIE>> cies_;
  std::map<uint64_t, std::unique_ptr<Entry>> entries_; // by FDE offset
  std::map<uint64_t, std::string> damaged_;            // by FDE offset: why it cannot be used
  std::map<uint64_t, std::vector<uint8_t>> rewritten_; // programs rewritten for LLVM, by entry offset
};

// The row of an FDE's table in force at a file address: the last that starts
// at or before it; nullptr when the address precedes every row.
const llvm::dwarf::UnwindRow *rowAt(const llvm::dwarf::UnwindTable &table, uint64_t address);

// The caller's registers by the row of `entry` that covers `address` (an
// address in the section's own terms), from the frame's registers.
UnwindResult applyEntry(const CfiSection::Entry &entry, uint64_t address, const Frame &frame, const Target &target);

} // namespace stackwalk
