// ThreadList / ThreadExList with their contexts, and ThreadNameList.
#include "BreakpadContext.h"
#include "Streams.h"

#include "stackwalk/core/WindowsContext.h"

#include <map>

namespace stackwalk::minidump {
namespace {

// MINIDUMP_THREAD_NAME, packed: ThreadId then the RVA of a MINIDUMP_STRING.
#pragma pack(push, 1)
struct ThreadName {
  uint32_t threadId;
  uint64_t nameRva;
};
#pragma pack(pop)
static_assert(sizeof(ThreadName) == 12);

constexpr StreamType ThreadNameList = StreamType(24); // not in LLVM 19's enum
constexpr size_t ThreadExSize = sizeof(llvm::minidump::Thread) + sizeof(llvm::minidump::MemoryDescriptor);

std::map<uint32_t, std::string> readThreadNames(const Reader &reader) {
  std::map<uint32_t, std::string> names;
  auto stream = reader.stream(ThreadNameList);
  if (!stream) return names;
  for (const ThreadName &entry : reader.list<ThreadName>(*stream, "ThreadNameList"))
    if (auto name = reader.string(entry.nameRva); name && !name->empty()) names[entry.threadId] = *name;
  return names;
}

} // namespace

std::vector<ThreadInfo> readThreads(const Reader &reader, Arch arch) {
  std::vector<llvm::minidump::Thread> raw;
  if (auto stream = reader.stream(StreamType::ThreadList))
    raw = reader.list<llvm::minidump::Thread>(*stream, "ThreadList");
  else if (auto ex = reader.stream(StreamType::ThreadExList))
    raw = reader.listOf<llvm::minidump::Thread>(*ex, ThreadExSize, "ThreadExList");
  std::map<uint32_t, std::string> names = readThreadNames(reader);
  std::vector<ThreadInfo> threads;
  for (const llvm::minidump::Thread &entry : raw) {
    ThreadInfo thread;
    thread.tid = entry.ThreadId;
    thread.context = RegisterFile(arch);
    if (auto name = names.find(entry.ThreadId); name != names.end()) thread.name = name->second;
    std::string what = "thread " + std::to_string(entry.ThreadId) + "'s context";
    std::span<const uint8_t> context = reader.slice(entry.Context, what);
    if (entry.Context.DataSize == 0) thread.contextAbsent = true;
    else if (auto regs = minidump::readThreadContext(arch, context)) thread.context = *regs;
    else reader.warn(what + ": " + llvm::toString(regs.takeError()));
    thread.fpState = fpStateFromWindowsContext(arch, context);
    threads.push_back(std::move(thread));
  }
  return threads;
}

} // namespace stackwalk::minidump
