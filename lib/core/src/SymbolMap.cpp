#include "stackwalk/core/SymbolMap.h"

#include "stackwalk/core/Fail.h"

#include "llvm/Support/Endian.h"

#include <algorithm>

using namespace llvm;
using llvm::support::endian::read32le;
using llvm::support::endian::read64le;

namespace stackwalk {
namespace {

constexpr char Magic[8] = {'S', 'W', 'S', 'Y', 'M', 'A', 'P', '1'};
constexpr size_t TableCount = 6;
constexpr size_t HeaderSize = 8 + 4 * TableCount;
constexpr size_t RangeSize = 12, ListSize = 8, FrameSize = 32, CallSiteSize = 20, NameSize = 8;
constexpr uint32_t NoFrames = UINT32_MAX;
constexpr uint32_t HasLine = 1, HasFunctionStart = 2, Inlined = 4; // a frame's flags
constexpr uint32_t TailCalling = 1, Declared = 2;                 // a call site's

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
    return fail("not a symbol map (no SWSYMAP1 header)");
  SymbolMap map;
  const char *header = bytes.data() + sizeof Magic;
  map.rangeCount_ = read32le(header);
  map.listCount_ = read32le(header + 4);
  map.frameCount_ = read32le(header + 8);
  map.callSiteCount_ = read32le(header + 12);
  map.tailNameCount_ = read32le(header + 16);
  uint64_t stringBytes = read32le(header + 20);
  uint64_t tables[TableCount] = {uint64_t(map.rangeCount_) * RangeSize,        uint64_t(map.listCount_) * ListSize,
                                 uint64_t(map.frameCount_) * FrameSize,        uint64_t(map.callSiteCount_) * CallSiteSize,
                                 uint64_t(map.tailNameCount_) * NameSize, stringBytes};
  uint64_t needed = HeaderSize;
  for (uint64_t size : tables) needed += size;
  if (needed != bytes.size()) return fail("a symbol map's tables do not fill its " + Twine(bytes.size()) + " bytes");
  StringRef rest = bytes.drop_front(HeaderSize);
  StringRef *views[TableCount] = {&map.ranges_, &map.lists_, &map.frames_, &map.callSites_, &map.tailNames_, &map.strings_};
  for (size_t i = 0; i < TableCount; ++i) {
    *views[i] = rest.take_front(tables[i]);
    rest = rest.drop_front(tables[i]);
  }
  return map;
}

std::optional<std::vector<SourceFrame>> SymbolMap::framesAt(uint64_t fileAddress) const {
  // The last range starting at or before the address.
  uint32_t low = 0, high = rangeCount_;
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    if (read64le(ranges_.data() + size_t(middle) * RangeSize) <= fileAddress) low = middle + 1;
    else high = middle;
  }
  if (low == 0) return std::vector<SourceFrame>();
  uint32_t list = read32le(ranges_.data() + size_t(low - 1) * RangeSize + 8);
  if (list == NoFrames) return std::vector<SourceFrame>();
  if (list >= listCount_) return std::nullopt;
  uint32_t first = read32le(lists_.data() + size_t(list) * ListSize);
  uint32_t count = read32le(lists_.data() + size_t(list) * ListSize + 4);
  if (first > frameCount_ || count > frameCount_ - first) return std::nullopt;
  std::vector<SourceFrame> frames;
  for (uint32_t i = first; i < first + count; ++i) {
    std::optional<SourceFrame> one = frame(i);
    if (!one) return std::nullopt;
    frames.push_back(std::move(*one));
  }
  return frames;
}

std::optional<SourceFrame> SymbolMap::frame(uint32_t index) const {
  const char *at = frames_.data() + size_t(index) * FrameSize;
  std::optional<std::string> function = string(read32le(at), read32le(at + 4));
  std::optional<std::string> file = string(read32le(at + 8), read32le(at + 12));
  if (!function || !file) return std::nullopt;
  uint32_t flags = read32le(at + 20);
  SourceFrame frame;
  frame.function = std::move(*function);
  frame.file = std::move(*file);
  if (flags & HasLine) frame.line = read32le(at + 16);
  if (flags & HasFunctionStart) frame.functionStart = read64le(at + 24);
  frame.inlined = flags & Inlined;
  return frame;
}

std::optional<std::string> SymbolMap::string(uint32_t offset, uint32_t length) const {
  if (offset > strings_.size() || length > strings_.size() - offset) return std::nullopt;
  return strings_.substr(offset, length).str();
}

bool SymbolMap::mayStartTailCalls(uint64_t returnPc, const SymbolMap *callee) const {
  auto pcAt = [&](uint32_t i) { return read64le(callSites_.data() + size_t(i) * CallSiteSize); };
  uint32_t low = 0, high = callSiteCount_;
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    if (pcAt(middle) < returnPc) low = middle + 1;
    else high = middle;
  }
  for (uint32_t i = low; i < callSiteCount_ && pcAt(i) == returnPc; ++i) {
    const char *site = callSites_.data() + size_t(i) * CallSiteSize;
    uint32_t flags = read32le(site + 8);
    if (flags & TailCalling || !callee) return true;
    std::optional<std::string> name = string(read32le(site + 12), read32le(site + 16));
    if (!name || (flags & Declared && callee->isTailCallingName(*name))) return true;
  }
  return false;
}

bool SymbolMap::isTailCallingName(StringRef name) const {
  uint32_t low = 0, high = tailNameCount_;
  while (low < high) {
    uint32_t middle = low + (high - low) / 2;
    const char *entry = tailNames_.data() + size_t(middle) * NameSize;
    std::optional<std::string> text = string(read32le(entry), read32le(entry + 4));
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

void SymbolMapWriter::addTailCallingName(const std::string &name) { tailNames_.push_back(name); }

uint32_t SymbolMapWriter::listIndex(const std::vector<SourceFrame> &frames) {
  std::string encoded;
  for (const SourceFrame &frame : frames) {
    put32(encoded, stringOffset(frame.function));
    put32(encoded, uint32_t(frame.function.size()));
    put32(encoded, stringOffset(frame.file));
    put32(encoded, uint32_t(frame.file.size()));
    put32(encoded, frame.line.value_or(0));
    put32(encoded, (frame.line ? HasLine : 0) | (frame.functionStart ? HasFunctionStart : 0) |
                       (frame.inlined ? Inlined : 0));
    put64(encoded, frame.functionStart.value_or(0));
  }
  auto [found, fresh] = listsByFrames_.try_emplace(encoded, uint32_t(lists_.size()));
  if (fresh) {
    lists_.emplace_back(uint32_t(frames_.size() / FrameSize), uint32_t(frames.size()));
    frames_ += encoded;
  }
  return found->second;
}

uint32_t SymbolMapWriter::stringOffset(const std::string &text) {
  auto [found, fresh] = stringOffsets_.try_emplace(text, uint32_t(strings_.size()));
  if (fresh) strings_ += text;
  return found->second;
}

std::string SymbolMapWriter::bytes() {
  std::sort(callSites_.begin(), callSites_.end(),
            [](const CallSite &a, const CallSite &b) { return a.returnPc < b.returnPc; });
  std::sort(tailNames_.begin(), tailNames_.end());
  tailNames_.erase(std::unique(tailNames_.begin(), tailNames_.end()), tailNames_.end());
  std::string names;
  for (const std::string &name : tailNames_) {
    put32(names, stringOffset(name));
    put32(names, uint32_t(name.size()));
  }
  std::string out(Magic, sizeof Magic);
  for (size_t count : {ranges_.size(), lists_.size(), frames_.size() / FrameSize, callSites_.size(), tailNames_.size(),
                       strings_.size()})
    put32(out, uint32_t(count));
  for (const Range &range : ranges_) {
    put64(out, range.start);
    put32(out, range.list);
  }
  for (auto [first, count] : lists_) {
    put32(out, first);
    put32(out, count);
  }
  out += frames_;
  for (const CallSite &site : callSites_) {
    put64(out, site.returnPc);
    put32(out, site.flags);
    put32(out, site.nameOffset);
    put32(out, site.nameLength);
  }
  return out + names + strings_;
}

} // namespace stackwalk
