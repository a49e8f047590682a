#include "stackwalk/core/PerfMap.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

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
    map.longest_ = std::max(map.longest_, entry.size);
    map.entries_.push_back(std::move(entry));
  }
  map.byStart_.resize(map.entries_.size());
  for (size_t i = 0; i < map.byStart_.size(); ++i) map.byStart_[i] = i;
  std::stable_sort(map.byStart_.begin(), map.byStart_.end(),
                   [&](size_t a, size_t b) { return map.entries_[a].start < map.entries_[b].start; });
  return map;
}

const PerfMap::Entry *PerfMap::lookup(uint64_t address) const {
  auto it = std::upper_bound(byStart_.begin(), byStart_.end(), address,
                             [&](uint64_t a, size_t i) { return a < entries_[i].start; });
  const Entry *best = nullptr;
  size_t bestIndex = 0;
  // Walk back over every entry that could still cover the address.
  while (it != byStart_.begin()) {
    --it;
    const Entry &entry = entries_[*it];
    if (address - entry.start >= longest_) break;
    if (address - entry.start < entry.size && (!best || *it > bestIndex)) {
      best = &entry;
      bestIndex = *it;
    }
  }
  return best;
}

} // namespace stackwalk
