// A Breakpad symbol file (.sym, as dump_syms writes it): one module's
// functions, source lines, inlined calls, public symbols, STACK CFI rules and
// (from a PDB) STACK WIN frame data, at offsets from the module's base. No library reads these (LLVM does not;
// Breakpad's and rust-minidump's readers are not packaged), so this one is ours.
//
// Files of real programs reach hundreds of MB: the text stays mapped, and
// opening it makes one pass that records where each FUNC, PUBLIC and
// STACK CFI INIT and STACK WIN record starts. A function's lines and inlined calls, and a
// CFI range's rules, are parsed when a lookup lands in them.
#pragma once

#include "stackwalk/core/SourceFrame.h"
#include "stackwalk/core/WindowsFrameInfo.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stackwalk {

class BreakpadSymbolFile {
public:
  // MODULE <os> <arch> <debug id> <debug file>, and INFO CODE_ID.
  struct Header {
    std::string os, arch, debugId, debugFile, codeId;
  };
  // One rule of a STACK CFI record: a register (".cfa", ".ra", "$rbp", "x29")
  // and the postfix expression that recovers it.
  struct CfiRule {
    std::string reg, expression;
  };
  static llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> open(const std::string &path);
  static llvm::Expected<std::unique_ptr<BreakpadSymbolFile>> parse(std::unique_ptr<llvm::MemoryBuffer> text,
                                                                   std::string path);
  // The same text with the index an earlier parse of it made (serializedIndex),
  // instead of a pass over the text (SymbolIndexCache.h). An error when the
  // bytes are not such an index for a text of this size.
  static llvm::Expected<std::unique_ptr<BreakpadSymbolFile>>
  withIndex(std::unique_ptr<llvm::MemoryBuffer> text, std::string path, llvm::ArrayRef<uint8_t> index);
  std::vector<uint8_t> serializedIndex() const;

  const Header &header() const { return header_; }
  const std::string &path() const { return path_; }

  // What the file says about an offset from the module's base: inlined calls
  // innermost first, then the function (a FUNC record, else the PUBLIC symbol
  // before it when no FUNC lies between and no STACK CFI range of a function
  // that starts after it covers the offset). functionStart is an offset too.
  // Empty when nothing covers the offset.
  std::vector<SourceFrame> frames(uint64_t offset) const;
  // Whether a FUNC record covers the offset.
  bool hasFunctionAt(uint64_t offset) const { return functionAt(offset) != nullptr; }
  // The STACK CFI rules in force at an offset: the INIT record's, then each
  // delta record's at or below it, in order (a later rule for a register
  // replaces an earlier one). nullopt when no INIT range covers the offset.
  std::optional<std::vector<CfiRule>> cfiRules(uint64_t offset) const;
  // The STACK WIN record for an offset: FrameData (type 4) before FPO
  // (type 0), as Breakpad prefers them; of overlapping records of one type
  // (a function's frame data after each push of its prolog) the one that
  // starts last, as the PDB's readers choose. Other types are not unwind data.
  std::optional<WindowsFrameInfo> windowsFrameInfo(uint64_t offset) const;
  // The size of the stack parameters of the function at an offset, from its
  // FUNC record, else the PUBLIC symbol that names it.
  std::optional<uint32_t> parameterSize(uint64_t offset) const;
  // Whether the file shows code at the offset, as the stack scan asks of a
  // return address whose code is not at hand: a FUNC record or an unwind
  // record (STACK CFI INIT, STACK WIN) covers it. A PUBLIC symbol has no size:
  // it counts alone in a file without unwind records, where nothing could say
  // where its code ends, and in a file with unwind records for few of its
  // functions, up to the next record (publicCodeReaches); elsewhere the
  // address after a module's last function, in its data, would count as code.
  bool describesCodeAt(uint64_t offset) const;
  // Whether a FUNC record or a PUBLIC symbol starts at the offset: a function's
  // address, which stacks hold as a pointer (a thread's start routine, a callback).
  bool startsFunctionAt(uint64_t offset) const;

private:
  struct Range {
    uint64_t start, size;
    size_t line; // offset of the record's text
  };
  explicit BreakpadSymbolFile(std::unique_ptr<llvm::MemoryBuffer> text, std::string path);
  llvm::Error index();
  llvm::Error readIndex(llvm::ArrayRef<uint8_t> bytes);
  llvm::StringRef lineAt(size_t offset) const;
  // The record an index entry points at, after its keyword ("FUNC "); nullopt
  // when the line there is no such record. Lookups also check that it restates
  // the entry's address or id: an index read back from a cache
  // (BreakpadSymbolIndex.cpp) leads only to the records it names.
  std::optional<llvm::StringRef> recordAt(size_t offset, llvm::StringRef keyword) const;
  size_t nextLine(size_t offset) const;
  std::string fileName(int64_t id) const;
  std::string originName(int64_t id) const;
  const Range *functionBefore(uint64_t offset) const; // the last FUNC starting at or below
  const Range *functionAt(uint64_t offset) const;
  const std::pair<uint64_t, size_t> *publicSymbolAt(uint64_t offset) const;
  const Range *cfiRangeAt(uint64_t offset) const;
  bool startsAnotherFunction(const Range *cfi, uint64_t symbol) const;
  bool publicCodeReaches(const std::pair<uint64_t, size_t> &symbol, uint64_t offset) const;
  // A PUBLIC record's address, parameter size and name; empty when it is not one.
  llvm::SmallVector<llvm::StringRef, 8> publicFields(const std::pair<uint64_t, size_t> *symbol) const;
  std::vector<SourceFrame> functionFrames(const Range &function, uint64_t offset) const;

  std::unique_ptr<llvm::MemoryBuffer> text_;
  std::string path_;
  Header header_;
  std::vector<Range> functions_, cfi_;
  std::vector<Range> frameData_, fpo_; // STACK WIN types 4 and 0
  std::vector<std::pair<uint64_t, size_t>> publics_; // address, offset of the record
  llvm::DenseMap<int64_t, size_t> files_, origins_;  // id -> offset of the record
};

} // namespace stackwalk
