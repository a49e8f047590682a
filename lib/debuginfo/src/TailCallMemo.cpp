#include "stackwalk/debuginfo/TailCallMemo.h"

namespace stackwalk {

std::optional<TailCallMemo::Pair> TailCallMemo::pairOf(std::span<const Frame> frames, size_t index) {
  const Frame &callee = frames[index], &caller = frames[index + 1];
  auto fileImage = [](const Module *module) { return module && module->image && !module->image->inMemory(); };
  if (!fileImage(callee.module) || !fileImage(caller.module)) return std::nullopt;
  uint64_t calleeBias = callee.module->loadBias(), callerBias = caller.module->loadBias();
  return Pair{callee.module->image.get(), callee.symbolAddress() - calleeBias, caller.module->image.get(),
              caller.ip - callerBias,     caller.symbolAddress() - callerBias, callee.module == caller.module};
}

std::optional<std::vector<TailCallFrame>> TailCallMemo::find(std::span<const Frame> frames, size_t index) const {
  std::optional<Pair> pair = pairOf(frames, index);
  auto known = pair ? kept_.find(*pair) : kept_.end();
  if (known == kept_.end()) return std::nullopt;
  return placeInDump(known->second, frames, index);
}

void TailCallMemo::keep(std::span<const Frame> frames, size_t index, const std::vector<TailCallFrame> &found) {
  std::optional<Pair> pair = pairOf(frames, index);
  if (!pair) return;
  if (kept_.size() >= MaxPairs) {
    kept_.clear();
    images_.clear();
  }
  for (const Module *module : {frames[index].module, frames[index + 1].module})
    images_.try_emplace(module->image.get(), module->image);
  kept_.emplace(*pair, placeInFiles(found, frames, index));
}

} // namespace stackwalk
