// Whether LLVM 19's DWARF readers can be handed a unit of a hostile file.
//
// In release builds LLVM's DataExtractor only asserts that an offset lies
// inside its data before decoding a LEB128; DWARFFormValue::skipValue and
// extractValue move the offset past a block or fixed-size value unchecked;
// extractValue has no case for forms skipValue does not know (the switch's
// default is unreachable); and the line-program loop jumps to an extended
// opcode's stated end even when that wraps around. So a malformed DIE or
// line-table header makes LLVM read far outside the section, or loop
// (fuzz/findings/llvm19-dwarf-*). LLVM offers no checked mode, so these
// scanners read the same bytes the way LLVM would, through bounded cursors,
// and say whether LLVM may read them.
#pragma once
#include <cstdint>
#include <map>
#include <vector>

namespace llvm {
class DWARFContext;
class DWARFUnit;
} // namespace llvm

namespace stackwalk {

class DwarfUnitCheck {
public:
  explicit DwarfUnitCheck(llvm::DWARFContext &context) : context_(context) {}

  // Every compile unit's first DIE. LLVM reads them all (to map addresses to
  // units where .debug_aranges is incomplete) before any lookup; if one is
  // unreadable the image's DWARF must not be used at all.
  bool unitHeadsReadable();

  // The unit LLVM picks for this file address: all its DIEs, its line table,
  // and likewise every unit its DIEs refer to (DW_FORM_ref_addr, ref_sig8).
  // True when no unit covers the address (LLVM then reads no unit).
  bool readableAt(uint64_t fileAddress);
  // One unit: its DIEs, its line table and every unit they refer to.
  bool unitClosureReadable(llvm::DWARFUnit &root);

  // The units LLVM may be sent to from a unit's DIEs.
  struct UnitReferences {
    std::vector<uint64_t> infoOffsets;    // DW_FORM_ref_addr
    std::vector<uint64_t> typeSignatures; // DW_FORM_ref_sig8
  };

private:
  struct UnitScan {
    bool readable = false; // its DIEs and line table
    UnitReferences refs;
  };
  llvm::DWARFContext &context_;
  std::map<const llvm::DWARFUnit *, UnitScan> unitScans_;
  std::map<const llvm::DWARFUnit *, bool> closureVerdicts_; // the unit and all it refers to
};

} // namespace stackwalk
