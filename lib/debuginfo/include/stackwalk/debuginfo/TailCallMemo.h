// Tail-call frames found earlier in a session, for its next dumps: a pair of
// frames at the same file addresses of the same module files has the same
// tail-call frames in every dump (what TailCallCache keeps on disk between
// processes, kept here in memory between a batch worker's dumps, which
// searched them again for every dump: a tenth of a batch of 1,000 small
// dumps). Only pairs of frames in module files are kept, and the memo holds
// their images, so that an image's address names it as long as it is a key;
// images made from a dump's memory go with their dump.
#pragma once

#include "stackwalk/debuginfo/TailCalls.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

namespace stackwalk {

class TailCallMemo {
public:
  // Pairs kept at most; past that the memo starts again empty.
  static constexpr size_t MaxPairs = 1 << 16;

  // The tail-call frames between physical frame `index` and its caller,
  // placed in this dump; nullopt when the pair was not kept.
  std::optional<std::vector<TailCallFrame>> find(std::span<const Frame> frames, size_t index) const;
  void keep(std::span<const Frame> frames, size_t index, const std::vector<TailCallFrame> &found);

private:
  // (callee's image, its lookup file address, caller's image, its ip and
  // lookup file addresses, whether both frames are in one module)
  using Pair = std::tuple<const ModuleImage *, uint64_t, const ModuleImage *, uint64_t, uint64_t, bool>;
  static std::optional<Pair> pairOf(std::span<const Frame> frames, size_t index);

  std::map<Pair, std::vector<PlacedTailCall>> kept_;
  std::map<const ModuleImage *, std::shared_ptr<const ModuleImage>> images_; // the keys' images, held
};

} // namespace stackwalk
