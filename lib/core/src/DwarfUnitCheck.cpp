#include "stackwalk/core/DwarfUnitCheck.h"

#include "ArangeSets.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/DebugInfo/DWARF/DWARFAbbreviationDeclaration.h"
#include "llvm/DebugInfo/DWARF/DWARFCompileUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugArangeSet.h"
#include "llvm/DebugInfo/DWARF/DWARFDebugAbbrev.h"
#include "llvm/DebugInfo/DWARF/DWARFFormValue.h"
#include "llvm/DebugInfo/DWARF/DWARFTypeUnit.h"
#include "llvm/DebugInfo/DWARF/DWARFUnit.h"
#include "llvm/Support/DataExtractor.h"

#include <algorithm>
#include <set>
#include <vector>

using namespace llvm;

namespace stackwalk {

namespace {

// A cursor that owns its error, so that no path leaks an unchecked llvm::Error.
struct BoundedCursor {
  DataExtractor data;
  DataExtractor::Cursor cursor;
  BoundedCursor(StringRef bytes, uint64_t end, bool littleEndian, uint64_t offset)
      : data(bytes.take_front(end), littleEndian, 0), cursor(offset) {}
  ~BoundedCursor() { consumeError(cursor.takeError()); }
  bool ok() { return bool(cursor); }
  uint64_t uleb() { return data.getULEB128(cursor); }
};

bool addressSizeReadable(uint8_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

// Moves past one value of this form, as DWARFFormValue::skipValue would, but
// within the data. False for a value that runs past the end and for forms
// LLVM's skipValue does not know (its extractValue would reach unreachable
// code on them). DW_FORM_indirect is resolved by the caller.
bool skipForm(BoundedCursor &in, dwarf::Form form, const dwarf::FormParams &params) {
  using namespace dwarf;
  switch (form) {
  case DW_FORM_block1: in.data.skip(in.cursor, in.data.getU8(in.cursor)); break;
  case DW_FORM_block2: in.data.skip(in.cursor, in.data.getU16(in.cursor)); break;
  case DW_FORM_block4: in.data.skip(in.cursor, in.data.getU32(in.cursor)); break;
  case DW_FORM_block:
  case DW_FORM_exprloc: in.data.skip(in.cursor, in.uleb()); break;
  case DW_FORM_string: in.data.getCStrRef(in.cursor); break;
  case DW_FORM_sdata: in.data.getSLEB128(in.cursor); break;
  case DW_FORM_udata:
  case DW_FORM_ref_udata:
  case DW_FORM_strx:
  case DW_FORM_addrx:
  case DW_FORM_loclistx:
  case DW_FORM_rnglistx:
  case DW_FORM_GNU_addr_index:
  case DW_FORM_GNU_str_index: in.uleb(); break;
  case DW_FORM_LLVM_addrx_offset: in.uleb(); in.data.skip(in.cursor, 4); break;
  case DW_FORM_addr:
    if (!addressSizeReadable(params.AddrSize)) return false; // LLVM's getUnsigned has no case for other sizes
    [[fallthrough]];
  case DW_FORM_ref_addr:
  case DW_FORM_flag_present:
  case DW_FORM_data1:
  case DW_FORM_data2:
  case DW_FORM_data4:
  case DW_FORM_data8:
  case DW_FORM_data16:
  case DW_FORM_flag:
  case DW_FORM_ref1:
  case DW_FORM_ref2:
  case DW_FORM_ref4:
  case DW_FORM_ref8:
  case DW_FORM_ref_sig8:
  case DW_FORM_ref_sup4:
  case DW_FORM_ref_sup8:
  case DW_FORM_strx1:
  case DW_FORM_strx2:
  case DW_FORM_strx4:
  case DW_FORM_addrx1:
  case DW_FORM_addrx2:
  case DW_FORM_addrx4:
  case DW_FORM_sec_offset:
  case DW_FORM_strp:
  case DW_FORM_strp_sup:
  case DW_FORM_line_strp:
  case DW_FORM_GNU_ref_alt:
  case DW_FORM_GNU_strp_alt:
  case DW_FORM_implicit_const: {
    std::optional<uint8_t> size = getFixedFormByteSize(form, params);
    if (!size) return false;
    in.data.skip(in.cursor, *size);
    break;
  }
  default: return false;
  }
  return in.ok();
}

dwarf::Form resolveIndirect(BoundedCursor &in, dwarf::Form form) {
  // Each DW_FORM_indirect takes at least a byte, so this ends at the data's end.
  while (form == dwarf::DW_FORM_indirect && in.ok()) form = dwarf::Form(in.uleb());
  return form;
}

using UnitReferences = DwarfUnitCheck::UnitReferences;

bool attributeReadable(BoundedCursor &in, dwarf::Form form, const dwarf::FormParams &params, UnitReferences &refs) {
  form = resolveIndirect(in, form);
  if (!in.ok()) return false;
  if (form == dwarf::DW_FORM_ref_addr) {
    refs.infoOffsets.push_back(in.data.getUnsigned(in.cursor, params.getRefAddrByteSize()));
    return in.ok();
  }
  if (form == dwarf::DW_FORM_ref_sig8) {
    refs.typeSignatures.push_back(in.data.getU64(in.cursor));
    return in.ok();
  }
  return skipForm(in, form, params);
}

// Every DIE of the unit, in the order and up to the point where
// DWARFUnit::extractDIEsToVector stops: the end of the unit DIE's children.
// Unlike LLVM, which stops quietly at a DIE it cannot read and leaves a partial
// tree (on which it later dereferences null DIEs), any such DIE makes the unit
// unreadable.
bool diesReadable(const DWARFUnit &unit, bool unitDieOnly, UnitReferences &refs) {
  const DWARFAbbreviationDeclarationSet *abbreviations = unit.getAbbreviations();
  if (!abbreviations) return false;
  BoundedCursor in(unit.getInfoSection().Data, unit.getNextUnitOffset(), unit.isLittleEndian(),
                   unit.getOffset() + unit.getHeaderSize());
  const dwarf::FormParams &params = unit.getFormParams();
  uint64_t depth = 0;
  do {
    uint64_t code = in.uleb();
    if (!in.ok()) return false;
    if (code == 0) { // the end of a list of children
      if (depth == 0) return false;
      --depth;
      continue;
    }
    const DWARFAbbreviationDeclaration *declaration = abbreviations->getAbbreviationDeclaration(uint32_t(code));
    if (!declaration) return false;
    for (const DWARFAbbreviationDeclaration::AttributeSpec &spec : declaration->attributes())
      if (!spec.isImplicitConst() && !attributeReadable(in, spec.Form, params, refs)) return false;
    if (unitDieOnly) return true;
    depth += declaration->hasChildren();
  } while (depth > 0);
  return true;
}

// parseV5DirFileTables: a list of (content type, form) pairs, then entries of
// values in those forms. The content types LLVM reads as constants must have
// constant forms (it dereferences getAsUnsignedConstant() unchecked); the MD5,
// a 16-byte block.
bool v5EntryTableReadable(BoundedCursor &in, const dwarf::FormParams &params) {
  uint8_t formatCount = in.data.getU8(in.cursor);
  std::vector<std::pair<uint64_t, dwarf::Form>> formats;
  for (uint8_t i = 0; i < formatCount && in.ok(); ++i) {
    uint64_t contentType = in.uleb();
    formats.emplace_back(contentType, dwarf::Form(in.uleb()));
  }
  uint64_t entries = in.uleb();
  for (uint64_t entry = 0; entry < entries && in.ok(); ++entry) {
    for (const auto &[contentType, declaredForm] : formats) {
      dwarf::Form form = resolveIndirect(in, declaredForm);
      bool constant = form == dwarf::DW_FORM_data1 || form == dwarf::DW_FORM_data2 || form == dwarf::DW_FORM_data4 ||
                      form == dwarf::DW_FORM_data8 || form == dwarf::DW_FORM_udata || form == dwarf::DW_FORM_sdata;
      switch (contentType) {
      case dwarf::DW_LNCT_directory_index:
      case dwarf::DW_LNCT_timestamp:
      case dwarf::DW_LNCT_size:
        if (!constant) return false;
        break;
      case dwarf::DW_LNCT_MD5:
        if (form != dwarf::DW_FORM_data16) return false;
        break;
      default: break;
      }
      if (!skipForm(in, form, params)) return false;
    }
  }
  return in.ok();
}

struct LineHeader {
  uint64_t programStart = 0, programEnd = 0;
  std::vector<uint8_t> operandCounts; // of the standard opcodes, from 1
};

// DWARFDebugLine::Prologue::parse's reads, bounded by the header's own length.
// Versions before 5 name directories and files with strings and ULEB128s, which
// LLVM reads safely; version 5 names them with forms. Nothing is read of a
// table LLVM would not parse (nullopt with `readable` true).
std::optional<LineHeader> lineHeader(StringRef section, bool littleEndian, uint64_t offset, bool &readable) {
  readable = true;
  BoundedCursor in(section, section.size(), littleEndian, offset);
  auto [unitLength, format] = static_cast<const DWARFDataExtractor &>(in.data).getInitialLength(in.cursor);
  LineHeader header;
  header.programEnd = in.cursor.tell() + std::min<uint64_t>(unitLength, section.size() - in.cursor.tell());
  dwarf::FormParams params{in.data.getU16(in.cursor), 0, format};
  if (!in.ok() || params.Version < 2 || params.Version > 5) return std::nullopt;
  if (params.Version >= 5) {
    params.AddrSize = in.data.getU8(in.cursor);
    in.data.getU8(in.cursor); // segment selector size
  }
  uint64_t headerLength = in.data.getUnsigned(in.cursor, params.getDwarfOffsetByteSize());
  uint64_t headerStart = in.cursor.tell();
  if (!in.ok()) return std::nullopt;
  if (headerLength > header.programEnd - headerStart) return readable = false, std::nullopt;
  header.programStart = headerStart + headerLength;
  BoundedCursor fields(section, header.programStart, littleEndian, headerStart);
  fields.data.skip(fields.cursor, params.Version >= 4 ? 5 : 4); // instruction lengths, is_stmt, line base and range
  uint8_t opcodeBase = fields.data.getU8(fields.cursor);
  for (unsigned opcode = 1; opcode < opcodeBase; ++opcode) header.operandCounts.push_back(fields.data.getU8(fields.cursor));
  if (!fields.ok()) return std::nullopt;
  if (params.Version >= 5 && !(v5EntryTableReadable(fields, params) && v5EntryTableReadable(fields, params)))
    return readable = false, std::nullopt;
  return header;
}

// LineTable::parse's loop, one opcode at a time from a fresh cursor as LLVM
// reads them. It continues at an extended opcode's stated end, which a huge
// length wraps to before the opcode: that loop would never end.
bool lineProgramEnds(StringRef section, bool littleEndian, const LineHeader &header) {
  uint64_t offset = header.programStart;
  while (offset < header.programEnd) {
    BoundedCursor in(section, header.programEnd, littleEndian, offset);
    uint8_t opcode = in.data.getU8(in.cursor);
    if (opcode == 0) {
      uint64_t length = in.uleb();
      uint64_t next = length ? in.cursor.tell() + length : in.cursor.tell();
      if (next <= offset) return false;
      offset = next;
      continue;
    }
    if (opcode <= header.operandCounts.size()) {
      unsigned operands = header.operandCounts[opcode - 1];
      switch (opcode) { // LLVM reads the standard opcodes' own operands, whatever the header says
      case dwarf::DW_LNS_advance_pc:
      case dwarf::DW_LNS_advance_line:
      case dwarf::DW_LNS_set_file:
      case dwarf::DW_LNS_set_column:
      case dwarf::DW_LNS_set_isa: operands = 1; break;
      case dwarf::DW_LNS_fixed_advance_pc: operands = 0; in.data.skip(in.cursor, 2); break;
      default:
        if (opcode < dwarf::DW_LNS_set_isa) operands = 0;
      }
      for (unsigned i = 0; i < operands; ++i) in.uleb(); // a SLEB128 has the same length
      if (!in.ok()) return true; // LLVM stops at a standard opcode it cannot read
    }
    offset = in.cursor.tell();
  }
  return true;
}

bool lineTableReadable(DWARFUnit &unit) {
  DWARFDie unitDie = unit.getUnitDIE(/*ExtractUnitDIEOnly=*/true);
  std::optional<uint64_t> offset = dwarf::toSectionOffset(unitDie.find(dwarf::DW_AT_stmt_list));
  StringRef section = unit.getLineSection().Data;
  if (!offset || *offset >= section.size()) return true; // LLVM reads no line table
  bool readable = true;
  std::optional<LineHeader> header = lineHeader(section, unit.isLittleEndian(), *offset, readable);
  return header ? lineProgramEnds(section, unit.isLittleEndian(), *header) : readable;
}

// The compile units .debug_aranges covers, as LLVM reads it; sorted.
std::vector<uint64_t> unitsWithAranges(const DWARFContext &context) {
  const DWARFObject &object = context.getDWARFObj();
  std::vector<uint64_t> units;
  forEachArangeSet(object.getArangesSection(), object.isLittleEndian(),
                   [&](const DWARFDebugArangeSet &set) { units.push_back(set.getCompileUnitDIEOffset()); });
  std::sort(units.begin(), units.end());
  return units;
}

} // namespace

// LLVM reads the unit DIE of each compile unit that .debug_aranges leaves out,
// to learn its address ranges; reading all of them here would cost as much as
// a whole stack walk on glibc's debug info.
bool DwarfUnitCheck::unitHeadsReadable() {
  std::vector<uint64_t> described = unitsWithAranges(context_);
  UnitReferences ignored;
  for (const auto &unit : context_.compile_units())
    if (!std::binary_search(described.begin(), described.end(), unit->getOffset()) &&
        !diesReadable(*unit, /*unitDieOnly=*/true, ignored))
      return false;
  return true;
}

DwarfUnitCheck::Verdict DwarfUnitCheck::verdictAt(uint64_t fileAddress) {
  DWARFCompileUnit *unit = context_.getCompileUnitForCodeAddress(fileAddress);
  if (!unit) return partialEnd_ ? Verdict::PastPartialSection : Verdict::Readable;
  return closureVerdict(*unit);
}

// Over references with a work list, not recursion: a hostile file can chain
// units as deep as it likes.
DwarfUnitCheck::Verdict DwarfUnitCheck::closureVerdict(DWARFUnit &root) {
  auto known = closureVerdicts_.find(&root);
  if (known != closureVerdicts_.end()) return known->second;
  std::set<const DWARFUnit *> visited{&root};
  std::vector<DWARFUnit *> pending{&root};
  Verdict verdict = Verdict::Readable;
  auto follow = [&](DWARFUnit *target) {
    if (!target && partialEnd_ && verdict == Verdict::Readable)
      verdict = Verdict::PastPartialSection; // it may be past the units at hand
    else if (target && visited.insert(target).second) pending.push_back(target);
  };
  while (verdict == Verdict::Readable && !pending.empty()) {
    DWARFUnit &unit = *pending.back();
    pending.pop_back();
    auto [scan, fresh] = unitScans_.try_emplace(&unit);
    if (fresh) scan->second.readable = diesReadable(unit, /*unitDieOnly=*/false, scan->second.refs) && lineTableReadable(unit);
    if (!scan->second.readable) verdict = Verdict::Unreadable;
    for (uint64_t offset : scan->second.refs.infoOffsets) follow(context_.getNormalUnitsVector().getUnitForOffset(offset));
    for (uint64_t signature : scan->second.refs.typeSignatures)
      follow(context_.getTypeUnitForHash(unit.getVersion(), signature, unit.isDWOUnit()));
  }
  closureVerdicts_[&root] = verdict;
  return verdict;
}

} // namespace stackwalk
