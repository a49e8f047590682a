#include "stackwalk/core/SymbolMap.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>

using namespace llvm;
using llvm::support::endian::read32le;
using llvm::support::endian::read64le;

namespace stackwalk {
namespace {

constexpr char Magic[8] = {'S', 'W', 'S', 'Y', 'M', 'A', 'P', '2'};
constexpr size_t Tables = 8;
constexpr size_t HeaderSize = 8 + 4 * Tables + 4 + 8;
constexpr uint64_t ChunkSize = 4096;
constexpr uint64_t FrameSize = 12, FunctionSize = 20, FileSize = 8;
// Bytes per entry of each table, in order; strings are counted in bytes.
constexpr uint64_t EntrySize[Tables] = {12, 8, FrameSize, FunctionSize, FileSize, 20, 8, 1};
constexpr uint32_t NoFrames = UINT32_MAX;
constexpr uint32_t InlinedCall = 1u << 31;   // in a frame's file field
constexpr uint32_t HasFunctionStart = 1;     // a function's flags
constexpr uint32_t TailCalling = 1, Declared = 2, AnyCallSite = 4; // a call site's (AnyCallSite: at address 0)

void put32(std::string &out, uint32_t value) {
  char bytes[4];
  support::endian::write32le(bytes, value);
  out.append(bytes, 4);
}

void put64(std::string &out, uint64_t value) {
  char bytes[8];
  support::endian::write64le(bytes, value);
  out.append(bytes, 8);
}

} // namespace

Expected<SymbolMap> SymbolMap::view(StringRef bytes) {
  if (bytes.size() < HeaderSize || !bytes.starts_with(StringRef(Magic, sizeof Magic)))
    return fail("not a symbol map (no SWSYMAP2 header)");
  SymbolMap map;
  const char *header = bytes.data() + sizeof Magic;
  uint64_t tablesSize = 0;
  for (size_t i = 0; i < Tables; ++i) {
    map.counts_[i] = read32le(header + 4 * i);
    map.tableStart_[i] = tablesSize;
    tablesSize += map.counts_[i] * EntrySize[i];
  }
  map.tableStart_[Tables] = tablesSize;
  uint64_t chunks = read32le(header + 4 * Tables);
  uint64_t checksumsHash = read64le(header + 4 * Tables + 4);
  if (chunks != (tablesSize + ChunkSize - 1) / ChunkSize || HeaderSize + chunks * 8 + tablesSize != bytes.size())
    return fail("a symbol map's tables do not fill its " + Twine(bytes.size()) + " bytes");
  map.checksums_ = bytes.substr(HeaderSize, chunks * 8);
  if (xxh3_64bits(map.checksums_) != checksumsHash) return fail("a symbol map's chunk checksums do not check");
  map.tables_ = bytes.substr(HeaderSize + chunks * 8);
  map.chunkChecked_ = std::make_shared<std::vector<uint8_t>>(chunks, 0);
  return map;
}

std::optional<StringRef> SymbolMap::read(Table table, uint64_t offset, uint64_t size) const {
  uint64_t tableSize = tableStart_[table + 1] - tableStart_[table];
  if (offset > tableSize || size > tableSize - offset) return std::nullopt;
  uint64_t start = tableStart_[table] + offset;
  for (uint64_t chunk = start / ChunkSize; size && chunk <= (start + size - 1) / ChunkSize; ++chunk) {
    uint8_t &state = (*chunkChecked_)[chunk];
    if (!state) {
      StringRef bytes = tables_.substr(chunk * ChunkSize, ChunkSize);
      state = xxh3_64bits(bytes) == read64le(checksums_.data() + chunk * 8) ? 1 : 2;
    }
    if (state != 1) return std::nullopt;
  }
  return tables_.substr(start, size);
}

std::optional<uint32_t> SymbolMap::read32(Table table, uint64_t offset) const {
  auto bytes = read(table, offset, 4);
  return bytes ? std::optional(read32le(bytes->data())) : std::nullopt;
}

std::optional<uint64_t> SymbolMap::read64(Table table, uint64_t offset) const {
  auto bytes = read(table, offset, 8);
  return bytes ? std::optional(read64le(bytes->data())) : std::nullopt;
}

std::optional<std::vector<SourceFrame>> SymbolMap::framesAt(uint64_t fileAddress) const {
  // The last range starting at or before the address.
  uint32_t low = 0, high = counts_[Ranges];
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    std::optional<uint64_t> start = read64(Ranges, uint64_t(middle) * EntrySize[Ranges]);
    if (!start) return std::nullopt;
    if (*start <= fileAddress) low = middle + 1;
    else high = middle;
  }
  if (low == 0) return std::vector<SourceFrame>();
  std::optional<uint32_t> list = read32(Ranges, uint64_t(low - 1) * EntrySize[Ranges] + 8);
  if (!list) return std::nullopt;
  if (*list == NoFrames) return std::vector<SourceFrame>();
  std::optional<uint32_t> first = read32(Lists, uint64_t(*list) * EntrySize[Lists]);
  std::optional<uint32_t> count = read32(Lists, uint64_t(*list) * EntrySize[Lists] + 4);
  if (!first || !count || *count > counts_[Frames]) return std::nullopt;
  std::vector<SourceFrame> frames;
  for (uint64_t i = *first; i < uint64_t(*first) + *count; ++i) {
    std::optional<SourceFrame> one = i < counts_[Frames] ? frame(uint32_t(i)) : std::nullopt;
    if (!one) return std::nullopt;
    frames.push_back(std::move(*one));
  }
  return frames;
}

std::optional<SourceFrame> SymbolMap::frame(uint32_t index) const {
  auto entry = read(Frames, uint64_t(index) * EntrySize[Frames], EntrySize[Frames]);
  if (!entry) return std::nullopt;
  uint32_t functionIndex = read32le(entry->data()), fileField = read32le(entry->data() + 4);
  uint32_t line = read32le(entry->data() + 8);
  auto function = read(Functions, uint64_t(functionIndex) * EntrySize[Functions], EntrySize[Functions]);
  auto file = read(Files, uint64_t(fileField & ~InlinedCall) * EntrySize[Files], EntrySize[Files]);
  if (!function || !file) return std::nullopt;
  std::optional<std::string> name = string(read32le(function->data()), read32le(function->data() + 4));
  std::optional<std::string> path = string(read32le(file->data()), read32le(file->data() + 4));
  if (!name || !path) return std::nullopt;
  SourceFrame frame;
  frame.function = std::move(*name);
  frame.file = std::move(*path);
  if (line) frame.line = line;
  if (read32le(function->data() + 8) & HasFunctionStart) frame.functionStart = read64le(function->data() + 12);
  frame.inlined = fileField & InlinedCall;
  return frame;
}

std::optional<std::string> SymbolMap::string(uint32_t offset, uint32_t length) const {
  auto bytes = read(Strings, offset, length);
  return bytes ? std::optional(bytes->str()) : std::nullopt;
}

bool SymbolMap::mayStartTailCalls(uint64_t returnPc, const SymbolMap *callee) const {
  uint64_t size = EntrySize[CallSites];
  if (counts_[CallSites]) {
    std::optional<uint32_t> firstFlags = read32(CallSites, 8);
    if (!firstFlags || *firstFlags & AnyCallSite) return true;
  }
  uint32_t low = 0, high = counts_[CallSites];
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    std::optional<uint64_t> pc = read64(CallSites, middle * size);
    if (!pc) return true; // damaged: assume the worst
    if (*pc < returnPc) low = middle + 1;
    else high = middle;
  }
  for (uint64_t i = low; i < counts_[CallSites]; ++i) {
    auto site = read(CallSites, i * size, size);
    if (!site) return true;
    if (read64le(site->data()) != returnPc) break;
    uint32_t flags = read32le(site->data() + 8);
    if (flags & TailCalling || !callee) return true;
    std::optional<std::string> name = string(read32le(site->data() + 12), read32le(site->data() + 16));
    if (!name || (flags & Declared && callee->isTailCallingName(*name))) return true;
  }
  return false;
}

bool SymbolMap::isTailCallingName(StringRef name) const {
  uint32_t low = 0, high = counts_[TailNames];
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    auto entry = read(TailNames, uint64_t(middle) * EntrySize[TailNames], EntrySize[TailNames]);
    std::optional<std::string> text = entry ? string(read32le(entry->data()), read32le(entry->data() + 4)) : std::nullopt;
    if (!text) return true; // damaged: assume the worst
    int order = StringRef(*text).compare(name);
    if (order == 0) return true;
    if (order < 0) low = middle + 1;
    else high = middle;
  }
  return false;
}

void SymbolMapWriter::add(uint64_t start, const std::vector<SourceFrame> &frames) {
  uint32_t list = frames.empty() ? NoFrames : listIndex(frames);
  // A run of equal answers is one range.
  if (!ranges_.empty() && ranges_.back().list == list) return;
  ranges_.push_back({start, list});
}

void SymbolMapWriter::addTailCallingSite(uint64_t returnPc) { callSites_.push_back({returnPc, TailCalling, 0, 0}); }

void SymbolMapWriter::addDeclaredCallSite(uint64_t returnPc, const std::string &name) {
  callSites_.push_back({returnPc, Declared, stringOffset(name), uint32_t(name.size())});
}

void SymbolMapWriter::addUnknownCallSites() { callSites_.push_back({0, AnyCallSite, 0, 0}); }

void SymbolMapWriter::addTailCallingName(const std::string &name) { tailNames_.push_back(name); }

uint32_t SymbolMapWriter::listIndex(const std::vector<SourceFrame> &frames) {
  std::string encoded;
  for (const SourceFrame &frame : frames) {
    put32(encoded, functionIndex(frame));
    put32(encoded, fileIndex(frame.file) | (frame.inlined ? InlinedCall : 0));
    put32(encoded, frame.line.value_or(0));
  }
  auto [found, fresh] = listsByFrames_.try_emplace(encoded, uint32_t(lists_.size()));
  if (fresh) {
    lists_.emplace_back(uint32_t(frames_.size() / FrameSize), uint32_t(frames.size()));
    frames_ += encoded;
  }
  return found->second;
}

uint32_t SymbolMapWriter::functionIndex(const SourceFrame &frame) {
  std::string entry;
  put32(entry, stringOffset(frame.function));
  put32(entry, uint32_t(frame.function.size()));
  put32(entry, frame.functionStart ? HasFunctionStart : 0);
  put64(entry, frame.functionStart.value_or(0));
  auto [found, fresh] = functionIndexes_.try_emplace(entry, uint32_t(functions_.size() / FunctionSize));
  if (fresh) functions_ += entry;
  return found->second;
}

uint32_t SymbolMapWriter::fileIndex(const std::string &file) {
  auto [found, fresh] = fileIndexes_.try_emplace(file, uint32_t(files_.size() / FileSize));
  if (fresh) {
    put32(files_, stringOffset(file));
    put32(files_, uint32_t(file.size()));
  }
  return found->second;
}

uint32_t SymbolMapWriter::stringOffset(const std::string &text) {
  auto [found, fresh] = stringOffsets_.try_emplace(text, uint32_t(strings_.size()));
  if (fresh) strings_ += text;
  return found->second;
}

std::string SymbolMapWriter::bytes() {
  // By address; AnyCallSite, the largest flag, first among those at 0.
  std::sort(callSites_.begin(), callSites_.end(), [](const CallSite &a, const CallSite &b) {
    return a.returnPc < b.returnPc || (a.returnPc == b.returnPc && a.flags > b.flags);
  });
  std::sort(tailNames_.begin(), tailNames_.end());
  tailNames_.erase(std::unique(tailNames_.begin(), tailNames_.end()), tailNames_.end());
  std::string names;
  for (const std::string &name : tailNames_) {
    put32(names, stringOffset(name));
    put32(names, uint32_t(name.size()));
  }
  std::string tables;
  for (const Range &range : ranges_) {
    put64(tables, range.start);
    put32(tables, range.list);
  }
  for (auto [first, count] : lists_) {
    put32(tables, first);
    put32(tables, count);
  }
  tables += frames_ + functions_ + files_;
  for (const CallSite &site : callSites_) {
    put64(tables, site.returnPc);
    put32(tables, site.flags);
    put32(tables, site.nameOffset);
    put32(tables, site.nameLength);
  }
  tables += names + strings_;

  std::string checksums;
  for (size_t at = 0; at < tables.size(); at += ChunkSize)
    put64(checksums, xxh3_64bits(StringRef(tables).substr(at, ChunkSize)));
  std::string out(Magic, sizeof Magic);
  for (uint64_t size : {uint64_t(ranges_.size()), uint64_t(lists_.size()), frames_.size() / FrameSize,
                        functions_.size() / FunctionSize, files_.size() / FileSize,
                        uint64_t(callSites_.size()), uint64_t(tailNames_.size()), uint64_t(strings_.size())})
    put32(out, uint32_t(size));
  put32(out, uint32_t(checksums.size() / 8));
  put64(out, xxh3_64bits(checksums));
  return out + checksums + tables;
}

} // namespace stackwalk
