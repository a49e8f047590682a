// The sets of a .debug_aranges section, read by the parser and with the
// stopping rule of LLVM's DWARFDebugAranges::extract (the first set that does
// not parse ends the section), so that what is read here is what LLVM reads.
#pragma once

#include "llvm/DebugInfo/DWARF/DWARFDataExtractor.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugArangeSet.h"
#include "llvm/Support/Error.h"

namespace stackwalk {

template <typename Visit> void forEachArangeSet(llvm::StringRef section, bool littleEndian, Visit visit) {
  llvm::DWARFDataExtractor data(section, littleEndian, 0);
  uint64_t offset = 0;
  llvm::DWARFDebugArangeSet set;
  auto ignore = [](llvm::Error warning) { llvm::consumeError(std::move(warning)); };
  while (data.isValidOffset(offset)) {
    if (llvm::Error err = set.extract(data, &offset, ignore)) {
      llvm::consumeError(std::move(err));
      return;
    }
    visit(set);
  }
}

} // namespace stackwalk
