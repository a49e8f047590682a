#include "stackwalk/core/ListedIds.h"

namespace stackwalk {

std::string listedIds(std::span<const uint64_t> ids, size_t named) {
  std::string text;
  for (size_t i = 0; i < ids.size() && i < named; ++i) text += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > named) text += " and " + std::to_string(ids.size() - named) + " more";
  return text;
}

std::string stacksCutShort(std::span<const uint64_t> threadIds) {
  constexpr size_t Named = 10;
  bool one = threadIds.size() == 1;
  return (one ? "the stack of thread " : "the stacks of threads ") + listedIds(threadIds, Named) +
         (one ? " is cut short" : " are cut short");
}

} // namespace stackwalk
