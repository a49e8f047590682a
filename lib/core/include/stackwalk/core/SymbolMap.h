// What the Symbolizer says at every file address of one image, as a compact
// table kept by --symbol-cache (SymbolMapCache.h): a later walk looks frames
// up in it instead of opening the image's symbol tables and DWARF.
//
// The Symbolizer's answer is constant between the addresses where something
// it reads starts or ends (a symbol, a DIE's range, a line row, a section),
// so the map is the sorted list of those addresses, each with the frames
// found there; runs of equal answers are one range.
//
// It also keeps what a walk reads DWARF for between two frames, to find the
// tail calls between them (lib/debuginfo's TailCalls.cpp), in enough detail
// to say when there can be none: the calls whose record names a function
// that makes tail calls, or a declaration (a function found by name in the
// callee's module), and the names by which a function making tail calls is
// found.
//
// The format (little-endian, no padding; made and read only here):
//   header: magic "SWSYMAP2", u32 counts of ranges, frame lists, frames,
//           functions, files, call sites, tail-calling names and string
//           bytes; u32 count of chunk checksums, u64 xxh3 of those checksums;
//   chunk checksums: u64 xxh3 of each 4 KiB of the tables after them;
//   ranges: u64 start, u32 frame list (NoFrames: nothing known), sorted by start;
//   frame lists: u32 first frame, u32 count;
//   frames: u32 function, u32 file (bit 31: an inlined call), u32 line (0: none);
//   functions: u32 name offset and length (into the strings), u32 flags, u64 start;
//   files: u32 offset and length;
//   call sites: u64 return address, u32 flags, u32 declared function's name
//           offset and length, sorted by return address;
//   tail-calling names: u32 offset and length, sorted by name;
//   strings.
// A lookup reads a few pages of a map of megabytes: each 4 KiB it reads is
// checked against its checksum the first time, not the whole map on open.
// Every count and index is checked before it is used: a view of bytes that
// do not hold a whole map is refused, and a lookup that would read outside
// them, or a chunk that does not check, answers "damaged".
#pragma once

#include "stackwalk/core/SourceFrame.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

class SymbolMap {
public:
  // A view of a map's bytes, which must outlive it.
  static llvm::Expected<SymbolMap> view(llvm::StringRef bytes);

  // The frames at a file address (empty: nothing known); nullopt when the
  // map's bytes are damaged there.
  std::optional<std::vector<SourceFrame>> framesAt(uint64_t fileAddress) const;
  size_t rangeCount() const { return counts_[Ranges]; }

  // False when no tail call can lie between the call returning to
  // `returnPc` (a file address) and the frame it led to, whose module's map
  // is `callee` (null: unknown). True when the map's bytes are damaged.
  bool mayStartTailCalls(uint64_t returnPc, const SymbolMap *callee) const;
  // Whether a function making tail calls is found by this symbol name.
  bool isTailCallingName(llvm::StringRef name) const;

private:
  enum Table { Ranges, Lists, Frames, Functions, Files, CallSites, TailNames, Strings, TableCount };
  SymbolMap() = default;
  // `size` bytes at `offset` into a table, its chunks checked; nullopt when
  // they lie outside it or a chunk does not check.
  std::optional<llvm::StringRef> read(Table table, uint64_t offset, uint64_t size) const;
  std::optional<uint32_t> read32(Table table, uint64_t offset) const;
  std::optional<uint64_t> read64(Table table, uint64_t offset) const;
  std::optional<SourceFrame> frame(uint32_t index) const;
  std::optional<std::string> string(uint32_t offset, uint32_t length) const;

  llvm::StringRef tables_, checksums_;
  uint64_t tableStart_[TableCount + 1] = {};
  uint32_t counts_[TableCount] = {};
  std::shared_ptr<std::vector<uint8_t>> chunkChecked_; // per chunk: 0 not yet, 1 checks, 2 does not
};

// Makes a map: the frames at each boundary address, in increasing order.
class SymbolMapWriter {
public:
  void add(uint64_t start, const std::vector<SourceFrame> &frames);
  // A call whose record names a function that makes tail calls.
  void addTailCallingSite(uint64_t returnPc);
  // A call whose record names a declared function (found by name in the callee's module).
  void addDeclaredCallSite(uint64_t returnPc, const std::string &name);
  void addTailCallingName(const std::string &name);
  // The call sites could not all be read: a tail call may start at any.
  void addUnknownCallSites();
  std::string bytes();

private:
  uint32_t listIndex(const std::vector<SourceFrame> &frames);
  uint32_t functionIndex(const SourceFrame &frame);
  uint32_t fileIndex(const std::string &file);
  uint32_t stringOffset(const std::string &text);

  struct Range {
    uint64_t start;
    uint32_t list;
  };
  struct CallSite {
    uint64_t returnPc;
    uint32_t flags, nameOffset, nameLength;
  };
  std::vector<Range> ranges_;
  std::vector<std::pair<uint32_t, uint32_t>> lists_;
  std::vector<CallSite> callSites_;
  std::vector<std::string> tailNames_;
  std::string frames_, functions_, files_, strings_;
  std::map<std::string, uint32_t> listsByFrames_, stringOffsets_, functionIndexes_, fileIndexes_;
};

} // namespace stackwalk
