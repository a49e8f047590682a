// What the DWARF of one physical frame's code says about the frame: the chain
// of function DIEs at its pc (inlined calls innermost first, the subprogram
// last) and the values DW_OP_fbreg and DW_OP_call_frame_cfa stand for.
#pragma once

#include "stackwalk/core/DwarfExpression.h"
#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Symbolizer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/DebugInfo/DWARF/DWARFDie.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stackwalk {

struct FrameScope {
  const Frame *frame = nullptr;
  Symbolizer *symbolizer = nullptr; // the module's DWARF at other addresses (Symbolizer::dwarf)
  llvm::DWARFUnit *unit = nullptr;
  uint64_t loadBias = 0;                     // runtime address - file address
  uint64_t pc = 0;                           // file address where locations are looked up
  llvm::SmallVector<llvm::DWARFDie, 4> chain; // innermost inlined call first, the subprogram last
  std::optional<uint64_t> cfa;
  std::optional<uint64_t> frameBase;
  std::string frameBaseProblem; // why there is no frame base

  llvm::DWARFDie subprogram() const { return chain.back(); }
  // The evaluator's view of this frame, without DW_OP_entry_value (the caller adds it).
  DwarfExpressionContext expressionContext(const MemorySource &memory) const;
};

// nullopt when the frame's code has no DWARF function at its pc.
std::optional<FrameScope> makeFrameScope(Symbolizer &symbolizer, const MemorySource &memory,
                                         std::span<const Frame> frames, size_t index);

// The expression of a location attribute (an exprloc, or the location-list
// entry covering the file address `pc`). nullopt with `problem` set when
// there is none at this pc.
std::optional<std::vector<uint8_t>> expressionAt(const llvm::DWARFDie &die, llvm::dwarf::Attribute attribute,
                                                 uint64_t pc, std::string &problem);

// The file address where a function is entered: DW_AT_entry_pc, DW_AT_low_pc,
// or the start of its first range (a function split into hot and cold parts).
std::optional<uint64_t> functionEntry(const llvm::DWARFDie &function);

// A single-value expression's result as a number: an address or value as
// computed, a register's content when it names a register.
llvm::Expected<uint64_t> evaluateToNumber(std::span<const uint8_t> expression, const DwarfExpressionContext &context);

} // namespace stackwalk
