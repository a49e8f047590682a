#include "stackwalk/live/LiveProcess.h"

#include "CoreWriter.h"
#include "ProcessMaps.h"
#include "ProcessMemory.h"
#include "ProcessTasks.h"
#include "ThreadStop.h"

#include "stackwalk/core/Auxv.h"
#include "stackwalk/core/Fail.h"
#include "stackwalk/core/RegularFile.h"
#include "stackwalk/elfcore/CoreModules.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace stackwalk {
namespace {

std::string procPath(pid_t pid, const std::string &leaf) { return "/proc/" + std::to_string(pid) + "/" + leaf; }

std::optional<std::string> readProcFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string firstLine(std::string text) { return text.substr(0, text.find('\n')); }

// The value of a "Key:\tvalue" line of /proc/PID/status.
std::optional<llvm::StringRef> statusField(llvm::StringRef status, llvm::StringRef key) {
  for (llvm::StringRef line : llvm::split(status, '\n')) {
    auto [name, value] = line.split(':');
    if (name == key) return value.trim();
  }
  return std::nullopt;
}

std::optional<long> statusNumber(llvm::StringRef status, llvm::StringRef key) {
  long number;
  auto value = statusField(status, key);
  if (!value || value->getAsInteger(10, number)) return std::nullopt;
  return number;
}

// The checks that can fail before any thread is touched; the task whose /proc
// entries show the process's memory (live::addressSpaceTask).
llvm::Expected<pid_t> checkTraceable(pid_t pid) {
  auto status = readProcFile(procPath(pid, "status"));
  if (!status || status->empty()) return fail("no process " + std::to_string(pid));
  auto tgid = statusNumber(*status, "Tgid");
  if (tgid && *tgid != pid)
    return fail(std::to_string(pid) + " is a thread of process " + std::to_string(*tgid) + "; give the process's id");
  if (pid == getpid()) return fail("stackwalk cannot stop itself");
  // An exited process cannot be traced; say so rather than that tracing is
  // not permitted. One whose main thread alone has exited is walked.
  std::optional<pid_t> task = live::addressSpaceTask(pid);
  if (!task) return fail("process " + std::to_string(pid) + " has exited; it has no threads to walk");
  std::string taskStatus = *task == pid ? *status : readProcFile(procPath(*task, "status")).value_or("");
  if (!statusField(taskStatus, "VmSize")) // no address space
    return fail(std::to_string(pid) + " is a kernel thread; it has no user stack to walk");
  auto tracer = statusNumber(*status, "TracerPid");
  if (tracer && *tracer != 0)
    return fail("process " + std::to_string(pid) + " is already traced by process " + std::to_string(*tracer) +
                " (a debugger?); detach it first");
  return *task;
}

std::string commandLine(pid_t pid) {
  std::string text = readProcFile(procPath(pid, "cmdline")).value_or("");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

std::map<pid_t, std::string> threadNames(pid_t pid) {
  std::map<pid_t, std::string> names;
  std::error_code error;
  for (const auto &task : std::filesystem::directory_iterator(procPath(pid, "task"), error)) {
    std::string tid = task.path().filename().string();
    if (auto comm = readProcFile(task.path().string() + "/comm"); comm && !tid.empty() && std::isdigit(tid[0]))
      names[pid_t(std::stol(tid))] = firstLine(*comm);
  }
  return names;
}

// A module whose file was deleted or replaced since it was mapped is read
// through /proc/PID/map_files, which still holds what is running.
void useMappedFile(Module &module, pid_t task, const std::vector<elfcore::FileMapping> &files) {
  if (!markedDeleted(module.recordedPath)) return;
  for (const elfcore::FileMapping &file : files)
    if (file.start == module.base) {
      std::string mapped = procPath(task, "map_files/" + llvm::utohexstr(file.start, /*LowerCase=*/true) + "-" +
                                             llvm::utohexstr(file.end, /*LowerCase=*/true));
      if (access(mapped.c_str(), R_OK) == 0) module.recordedPath = mapped;
      return;
    }
}

void addModules(Target &target, pid_t task, const live::ProcessMaps &maps, const std::vector<uint8_t> &auxvBytes) {
  auto auxv = parseAuxv(auxvBytes);
  target.modules = elfcore::modulesFromFileNote(maps.files, target);
  for (Module &module : target.modules) useMappedFile(module, task, maps.files);
  if (auto entry = auxvValue(auxv, AT_ENTRY))
    for (Module &module : target.modules)
      if (module.contains(*entry)) module.isMainExecutable = true;
  if (maps.vdso) {
    if (auto vdso = elfcore::vdsoModule(maps.vdso->start, maps.vdso->end, target)) target.modules.push_back(std::move(*vdso));
    else target.warnings.push_back(llvm::toString(vdso.takeError()));
  }
  target.sortModules();
}

} // namespace

llvm::Expected<std::unique_ptr<LiveProcess>> LiveProcess::open(pid_t pid) {
  llvm::Expected<pid_t> task = checkTraceable(pid);
  if (!task) return task.takeError();
  std::unique_ptr<LiveProcess> live(new LiveProcess);
  live->pid_ = pid;
  live->threadNames_ = threadNames(pid);
  live->memory_ = std::make_shared<live::ProcessMemory>(*task);
  auto target = std::make_unique<Target>(live::HostArch, OS::Linux, "live",
                                         std::make_unique<live::SharedProcessMemory>(live->memory_));
  target->process.pid = uint64_t(pid);
  target->process.name = firstLine(readProcFile(procPath(pid, "comm")).value_or(""));
  target->process.commandLine = commandLine(*task);
  utsname host;
  if (uname(&host) == 0) target->osVersion = host.release;
  if (*task != pid)
    target->warnings.push_back("the process's main thread (" + std::to_string(pid) +
                               ") has exited; its other threads run on");
  live::ProcessMaps maps = live::parseProcessMaps(readProcFile(procPath(*task, "maps")).value_or(""));
  target->regions = maps.regions;
  std::string auxv = readProcFile(procPath(*task, "auxv")).value_or("");
  live->auxv_.assign(auxv.begin(), auxv.end());
  addModules(*target, *task, maps, live->auxv_);
  live->name_ = target->process.name;
  live->commandLine_ = target->process.commandLine;
  live->regions_ = maps.regions;
  live->mainStack_ = maps.mainStack;
  live->files_ = maps.files;
  live->target_ = std::move(target);
  return live;
}

llvm::Expected<LiveProcess::Threads> LiveProcess::stop(bool forCore, bool fpState) {
  auto stop = live::ThreadStop::stop(pid_, fpState || forCore); // a core holds them as the kernel's do
  if (!stop) return stop.takeError();
  stop_ = std::move(*stop);
  // What was read while the process ran may have changed since: a walk reads
  // it again as it needs it; a core holds all of it, read again now.
  if (forCore) {
    memory_->refresh();
    keepForCore();
  } else {
    memory_->forget();
  }
  Threads out;
  for (const live::StoppedThread &stopped : stop_->threads()) {
    ThreadInfo thread;
    thread.tid = uint64_t(stopped.tid);
    thread.context = stopped.registers;
    thread.fpState = stopped.fpState;
    auto name = threadNames_.find(stopped.tid);
    if (name != threadNames_.end()) thread.name = name->second;
    else if (auto comm = readProcFile(procPath(pid_, "task/" + std::to_string(stopped.tid) + "/comm")))
      thread.name = firstLine(*comm); // a thread started since
    out.threads.push_back(std::move(thread));
  }
  if (const std::vector<pid_t> &dropped = stop_->droppedThreads(); !dropped.empty()) {
    std::string tids;
    for (pid_t tid : dropped) tids += (tids.empty() ? "" : ", ") + std::to_string(tid);
    out.warnings.push_back("thread(s) " + tids + " exited or did not stop in time (asleep in the kernel); not walked");
  }
  return out;
}

std::optional<std::string> LiveProcess::perfMap() const {
  std::string path = "/tmp/perf-" + std::to_string(pid_) + ".map";
  struct stat file, process;
  if (stat(path.c_str(), &file) != 0 || stat(procPath(pid_, "").c_str(), &process) != 0) return std::nullopt;
  if (!S_ISREG(file.st_mode) || file.st_uid != process.st_uid) return std::nullopt;
  return path;
}

// The mapping holding each stopped thread's stack pointer.
std::vector<MemoryRegion> LiveProcess::stackRegions() const {
  std::vector<MemoryRegion> stacks;
  for (const live::StoppedThread &thread : stop_->threads()) {
    auto sp = thread.registers.sp();
    if (const MemoryRegion *stack = sp ? regionContaining(regions_, *sp) : nullptr) stacks.push_back(*stack);
  }
  std::sort(stacks.begin(), stacks.end(), [](const MemoryRegion &a, const MemoryRegion &b) { return a.start < b.start; });
  stacks.erase(std::unique(stacks.begin(), stacks.end(),
                           [](const MemoryRegion &a, const MemoryRegion &b) { return a.start == b.start; }),
               stacks.end());
  return stacks;
}

bool LiveProcess::threadsOnTheirOwnStacks() const {
  constexpr unsigned FsBase = 58; // x86-64's DWARF number
  if (live::HostArch != Arch::X86_64) return false;
  for (const live::StoppedThread &thread : stop_->threads()) {
    auto sp = thread.registers.sp();
    const MemoryRegion *stack = sp ? regionContaining(regions_, *sp) : nullptr;
    if (!stack) return false;
    if (thread.tid == pid_) {
      if (!mainStack_ || stack->start != mainStack_->start) return false;
      continue;
    }
    auto tcb = thread.registers.get(FsBase);
    if (!tcb || regionContaining(regions_, *tcb) != stack) return false;
  }
  return true;
}

// Each thread's stack, from below its stack pointer (the red zone, where a
// leaf function keeps its locals) to the end of its mapping (the stack's
// base: its used part), at most 8 MiB.
void LiveProcess::keepStacks() {
  constexpr uint64_t RedZone = 128, MaxStackBytes = 8 << 20;
  for (const live::StoppedThread &thread : stop_->threads()) {
    auto sp = thread.registers.sp();
    const MemoryRegion *stack = sp ? regionContaining(regions_, *sp) : nullptr;
    if (!stack) continue;
    uint64_t start = std::max(stack->start, *sp - std::min(*sp, RedZone));
    memory_->keep(start, std::min(stack->end, start + MaxStackBytes));
  }
}

// What a debugger reading the core needs beyond what the walk read: each
// thread's stack; the first page of each module (its ELF header and build-id,
// as the kernel's coredump_filter keeps them); every page of a file that is
// gone (deleted since it was mapped, or a memfd's), which no one reading the
// core could find, so that stackwalk rebuilds its module from them as from a
// full core's, up to MaxGoneFileBytes; and the dynamic linker's list of
// modules (r_debug and its link_map entries), which gdb follows to find them.
void LiveProcess::keepForCore() {
  constexpr uint64_t MaxGoneFileBytes = uint64_t(256) << 20; // what a rebuilt image may take
  keepStacks();
  uint64_t goneBudget = MaxGoneFileBytes;
  for (const elfcore::FileMapping &file : files_) {
    if (markedDeleted(file.path) && file.end - file.start <= goneBudget) {
      memory_->keep(file.start, file.end);
      goneBudget -= file.end - file.start;
    } else if (file.fileOffset == 0) {
      memory_->keep(file.start, file.start + 1);
    }
  }
  live::SharedProcessMemory memory(memory_);
  std::vector<std::string> ignored;
  if (auto phdr = auxvValue(parseAuxv(auxv_), AT_PHDR))
    elfcore::modulesFromLinkMap({*phdr, std::nullopt, sizeof(void *)}, "", memory, ignored); // read to be kept
}

llvm::Error LiveProcess::saveCore(const std::string &path) const {
  if (!stop_) return fail("the process was not stopped: there is nothing to write");
  live::CoreContents contents;
  contents.pid = uint32_t(pid_);
  contents.name = name_;
  contents.arguments = commandLine_;
  for (const live::StoppedThread &thread : stop_->threads())
    contents.threads.push_back({uint32_t(thread.tid), thread.userRegs, thread.fpRegs, thread.xstate});
  contents.auxv = auxv_;
  contents.files = files_;
  contents.regions = regions_;
  for (auto &[address, bytes] : memory_->keptRanges()) contents.memory.push_back({address, std::move(bytes)});
  return live::writeElfCore(path, contents);
}

LiveProcess::~LiveProcess() { resume(); }

std::chrono::microseconds LiveProcess::resume(AfterResume reads) {
  if (!stop_) return std::chrono::microseconds(0);
  if (reads == AfterResume::AllButStacks) {
    memory_->freeze(stackRegions(), /*readOutside=*/true);
  } else {
    // Read-only mappings of files cannot change while the process runs.
    std::vector<MemoryRegion> unchanging;
    for (const elfcore::FileMapping &file : files_)
      if (const MemoryRegion *region = regionContaining(regions_, file.start); region && !region->writable)
        unchanging.push_back(*region);
    memory_->freeze(std::move(unchanging), /*readOutside=*/false);
  }
  return stop_->resume();
}

} // namespace stackwalk
