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
#include <optional>
#include <vector>

namespace llvm {
class DWARFContext;
class DWARFUnit;
} // namespace llvm

namespace stackwalk {

class DwarfUnitCheck {
public:
  // With `partialEnd`, the context holds .debug_info's units before that
  // offset only (PrefetchedTwin::covering): what needs one past them, or may,
  // is told apart, for the Symbolizer to read from the whole section.
  explicit DwarfUnitCheck(llvm::DWARFContext &context, std::optional<uint64_t> partialEnd = std::nullopt)
      : context_(context), partialEnd_(partialEnd) {}

  enum class Verdict { Readable, Unreadable, PastPartialSection };

  // Every compile unit's first DIE. LLVM reads them all (to map addresses to
  // units where .debug_aranges is incomplete) before any lookup; if one is
  // unreadable the image's DWARF must not be used at all.
  bool unitHeadsReadable();

  // The unit LLVM picks for this file address: all its DIEs, its line table,
  // and likewise every unit its DIEs refer to (DW_FORM_ref_addr, ref_sig8).
  // Readable when no unit covers the address (LLVM then reads no unit), but
  // in a partial context, where one past it may.
  Verdict verdictAt(uint64_t fileAddress);
  bool readableAt(uint64_t fileAddress) { return verdictAt(fileAddress) == Verdict::Readable; }
  // One unit: its DIEs, its line table and every unit they refer to.
  Verdict closureVerdict(llvm::DWARFUnit &root);
  bool unitClosureReadable(llvm::DWARFUnit &root) { return closureVerdict(root) == Verdict::Readable; }

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
  std::optional<uint64_t> partialEnd_;
  std::map<const llvm::DWARFUnit *, UnitScan> unitScans_;
  std::map<const llvm::DWARFUnit *, Verdict> closureVerdicts_; // the unit and all it refers to
};

} // namespace stackwalk
