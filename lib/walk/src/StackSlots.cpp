#include "StackSlots.h"

#include <algorithm>

namespace stackwalk {
namespace {

constexpr unsigned KbWords = 3;  // what WinDbg's kb shows without symbols
constexpr unsigned MostWords = 16; // a symbol file's claim, bounded

unsigned slotCount(const Frame &frame) {
  const Module *module = frame.module;
  if (!module || !module->symbolFile) return KbWords;
  uint64_t offset = frame.lookupAddress() - module->base;
  std::optional<uint32_t> bytes;
  if (auto info = module->symbolFile->windowsFrameInfo(offset)) bytes = info->parameterSize;
  else bytes = module->symbolFile->parameterSize(offset);
  return bytes ? std::min<unsigned>(*bytes / 4, MostWords) : KbWords;
}

} // namespace

std::vector<uint64_t> stackSlotsAbove(const Target &target, const std::vector<Frame> &frames, size_t index) {
  std::vector<uint64_t> words;
  if (target.arch() != Arch::X86 || index + 1 >= frames.size()) return words;
  uint64_t at = frames[index + 1].sp;
  for (unsigned i = 0, count = slotCount(frames[index]); i < count; ++i) {
    std::optional<uint64_t> word = target.readPointer(at + 4 * uint64_t(i), 4);
    if (!word) break;
    words.push_back(*word);
  }
  return words;
}

} // namespace stackwalk
