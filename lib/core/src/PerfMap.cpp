#include "stackwalk/core/PerfMap.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <queue>

namespace stackwalk {

namespace {
constexpr size_t MaxEntries = 1 << 22;
}

std::optional<PerfMap> PerfMap::load(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) return std::nullopt;
  return parse(std::string((*buffer)->getBuffer()));
}

PerfMap PerfMap::parse(const std::string &text) {
  PerfMap map;
  llvm::StringRef rest(text);
  while (!rest.empty() && map.entries_.size() < MaxEntries) {
    auto [line, next] = rest.split('\n');
    rest = next;
    line = line.trim();
    if (line.empty()) continue;
    auto [start, afterStart] = line.split(' ');
    auto [size, name] = afterStart.ltrim().split(' ');
    Entry entry;
    start.consume_front("0x");
    size.consume_front("0x");
    if (start.getAsInteger(16, entry.start) || size.getAsInteger(16, entry.size) || name.trim().empty() ||
        entry.size == 0 || entry.start + entry.size < entry.start) {
      ++map.malformed_;
      continue;
    }
    entry.name = name.trim().str();
    map.entries_.push_back(std::move(entry));
  }
  map.divideAddresses();
  return map;
}

// A sweep over the entries' starts and ends, the covering entries kept in a
// heap by line number: each lookup is then one binary search, where a walk
// back over earlier-starting entries took as long as the map when one entry
// was wide.
void PerfMap::divideAddresses() {
  std::vector<uint64_t> edges;
  edges.reserve(2 * entries_.size());
  for (const Entry &entry : entries_) edges.insert(edges.end(), {entry.start, entry.start + entry.size});
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<size_t> byStart(entries_.size());
  for (size_t i = 0; i < byStart.size(); ++i) byStart[i] = i;
  std::sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) { return entries_[a].start < entries_[b].start; });
  std::priority_queue<size_t> covering; // the latest line on top; entries that ended are dropped when on top
  auto next = byStart.begin();
  for (uint64_t edge : edges) {
    for (; next != byStart.end() && entries_[*next].start == edge; ++next) covering.push(*next);
    while (!covering.empty() && entries_[covering.top()].start + entries_[covering.top()].size <= edge)
      covering.pop();
    size_t owner = covering.empty() ? NoEntry : covering.top();
    if (stretches_.empty() || stretches_.back().entry != owner) stretches_.push_back({edge, owner});
  }
}

const PerfMap::Entry *PerfMap::lookup(uint64_t address) const {
  auto after = std::upper_bound(stretches_.begin(), stretches_.end(), address,
                                [](uint64_t a, const Stretch &stretch) { return a < stretch.start; });
  if (after == stretches_.begin() || std::prev(after)->entry == NoEntry) return nullptr;
  return &entries_[std::prev(after)->entry];
}

} // namespace stackwalk
