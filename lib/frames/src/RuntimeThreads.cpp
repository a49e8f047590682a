#include "stackwalk/frames/RuntimeThreads.h"

#include "stackwalk/core/Hex.h"

#include <set>

namespace stackwalk::frames {
namespace {

constexpr unsigned MaxThreads = 1 << 20;

llvm::Expected<RuntimeThread> readThread(const RuntimeData &data, uint64_t address) {
  RuntimeThread thread;
  thread.address = address;
  auto osId = data.pointer(address, "Thread", "OSId");
  if (!osId) return osId.takeError();
  auto id = data.value<uint32_t>(address, "Thread", "Id");
  if (!id) return id.takeError();
  auto frame = data.pointer(address, "Thread", "Frame");
  if (!frame) return frame.takeError();
  thread.osId = *osId;
  thread.managedId = *id;
  thread.firstFrame = *frame;
  return thread;
}

} // namespace

// The list links Thread.LinkNext fields: a link points at the next
// thread's link, so each Thread is its link minus the field's offset.
RuntimeThreadList readRuntimeThreads(const RuntimeData &data) {
  RuntimeThreadList list;
  auto fail = [&](llvm::Error error) {
    list.problem = llvm::toString(std::move(error));
    return std::move(list);
  };
  auto store = data.globalPointer("ThreadStore");
  if (!store) return fail(store.takeError());
  auto linkOffset = data.offset("Thread", "LinkNext");
  if (!linkOffset) return fail(linkOffset.takeError());
  auto link = data.pointer(*store, "ThreadStore", "FirstThreadLink");
  if (!link) return fail(link.takeError());
  std::set<uint64_t> seen;
  while (*link) {
    if (list.threads.size() == MaxThreads || !seen.insert(*link).second) {
      list.problem = "the runtime's thread list loops at " + hex(*link);
      break;
    }
    uint64_t address = *link - *linkOffset;
    auto thread = readThread(data, address);
    if (!thread) return fail(thread.takeError());
    list.threads.push_back(*thread);
    link = data.pointer(address, "Thread", "LinkNext");
    if (!link) return fail(link.takeError());
  }
  return list;
}

} // namespace stackwalk::frames
