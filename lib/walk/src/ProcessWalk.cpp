#include "Report.h"
#include "ManagedFrames.h"

#include "stackwalk/unwinder/CfiUnwinder.h"
#include "stackwalk/unwinder/FallbackUnwinders.h"
#include "stackwalk/unwinder/Win64Unwinder.h"

#include <algorithm>
#include <span>

namespace stackwalk {
namespace {

std::vector<const ThreadInfo *> selectThreads(const Target &target, const ReportOptions &options,
                                              std::vector<std::string> &warnings) {
  std::vector<const ThreadInfo *> selected;
  if (options.allThreads) {
    for (const ThreadInfo &thread : target.threads) selected.push_back(&thread);
  } else if (!options.threadIds.empty()) {
    for (uint64_t tid : options.threadIds) {
      auto it = std::find_if(target.threads.begin(), target.threads.end(),
                             [&](const ThreadInfo &t) { return t.tid == tid; });
      if (it == target.threads.end()) warnings.push_back("thread " + std::to_string(tid) + " is not in the dump");
      else selected.push_back(&*it);
    }
  } else {
    auto crashed = target.crash ? std::find_if(target.threads.begin(), target.threads.end(),
                                               [&](const ThreadInfo &t) { return t.tid == target.crash->threadId; })
                                : target.threads.end();
    if (crashed != target.threads.end()) selected.push_back(&*crashed);
    else if (!target.threads.empty()) selected.push_back(&target.threads.front());
  }
  if (selected.size() > options.maxThreads) {
    warnings.push_back("only the first " + std::to_string(options.maxThreads) + " of " +
                       std::to_string(selected.size()) + " threads are walked (--max-threads)");
    selected.resize(options.maxThreads);
  }
  return selected;
}

// A frame outside every module may be JIT code that its registration with
// libunwind or a perf map names.
void nameRuntimeCode(ReportFrame &entry, const Frame &frame, const Target &target,
                     const LibunwindDynamicUnwinder &dynamic) {
  if (frame.module) return;
  if (const DynamicProcedure *procedure = dynamic.procedureAt(frame.lookupAddress()); procedure && !procedure->name.empty()) {
    entry.function = procedure->name;
    entry.functionOffset = frame.ip - procedure->start;
  } else if (const PerfMap::Entry *symbol = target.perfMap ? target.perfMap->lookup(frame.lookupAddress()) : nullptr) {
    entry.function = symbol->name;
    entry.functionOffset = frame.ip - symbol->start;
  }
}

// With --args: each function's arguments, when the DWARF chain at the frame
// is the one the Symbolizer named (it leaves out nameless entries).
void addArguments(std::span<ReportFrame> entries, std::vector<std::vector<FunctionArgument>> arguments) {
  if (arguments.size() != entries.size()) return;
  for (size_t i = 0; i < entries.size(); ++i) entries[i].arguments = std::move(arguments[i]);
}

void addEntries(ReportThread &thread, const Frame &frame, Symbolizer &symbolizer, const Target &target,
                const LibunwindDynamicUnwinder &dynamic, std::vector<std::vector<FunctionArgument>> *arguments) {
  ReportFrame base;
  base.kind = frame.kind;
  base.trust = frame.trust;
  base.ip = frame.ip;
  base.sp = frame.sp;
  base.module = frame.module;
  base.signalTrampoline = frame.signalTrampoline;
  // physicalFrames is complete before entries are made, so this stays valid.
  base.registers = &frame.regs;
  const std::vector<SourceFrame> *sources = nullptr;
  if (frame.module) sources = &symbolizer.symbolize(*frame.module, frame.symbolAddress());
  if (!sources || sources->empty()) {
    nameRuntimeCode(base, frame, target, dynamic);
    base.index = unsigned(thread.frames.size());
    thread.frames.push_back(base);
    return;
  }
  size_t first = thread.frames.size();
  for (const SourceFrame &source : *sources) {
    ReportFrame entry = base;
    entry.index = unsigned(thread.frames.size());
    entry.inlined = source.inlined;
    if (entry.inlined) entry.registers = nullptr;
    entry.function = source.function;
    entry.file = source.file;
    entry.line = source.line;
    if (source.functionStart) {
      uint64_t start = *source.functionStart + frame.module->loadBias();
      if (start <= frame.ip) entry.functionOffset = frame.ip - start;
    }
    thread.frames.push_back(std::move(entry));
  }
  if (arguments)
    addArguments(std::span(thread.frames).last(thread.frames.size() - first), std::move(*arguments));
}

} // namespace

Report planReport(const std::string &dumpPath, const Target &target, const ReportOptions &options) {
  Report report;
  report.dumpPath = dumpPath;
  report.target = &target;
  report.warnings = target.warnings;
  report.threads = selectThreads(target, options, report.warnings);
  report.dynamicProcedures = readLibunwindDynamicInfo(target, report.warnings);
  report.runtime = openRuntime(target, report.warnings);
  if (target.arch() != Arch::X86_64)
    report.warnings.push_back("unwinding " + std::string(archName(target.arch())) +
                              " stacks is not implemented: each thread shows its context frame only");
  return report;
}

void WalkSession::endDump(const Target &target) {
  for (const Module &module : target.modules)
    if (module.image && module.image->inMemory()) {
      symbolizer.forget(module.image.get());
      cfi.forget(module.image.get());
    }
}

void writeReport(const Report &report, const ReportOptions &options, ReportPrinter &printer, WalkSession &session) {
  const Target &target = *report.target;
  CfiUnwinder &cfi = session.cfi;
  Symbolizer &symbolizer = session.symbolizer;
  Win64Unwinder win64; // keyed by module base: one dump's only
  LibunwindDynamicUnwinder dynamic(report.dynamicProcedures);
  BadCallUnwinder badCall;
  FramePointerUnwinder framePointer;
  StackScanUnwinder scan;
  printer.begin(report);
  for (const ThreadInfo *info : report.threads) {
    ReportThread thread;
    thread.tid = info->tid;
    thread.name = info->name;
    thread.crashed = target.crash && target.crash->threadId == info->tid;
    std::optional<ManagedThread> managed;
    if (report.runtime) managed.emplace(*report.runtime, thread);
    // In order of trust; only x86-64 stacks are unwound.
    std::vector<Unwinder *> unwinders;
    if (target.arch() == Arch::X86_64) {
      bool windows = target.os() == OS::Windows;
      if (managed) unwinders.push_back(managed->codeUnwinder());
      if (windows) unwinders.push_back(&win64);
      else unwinders.insert(unwinders.end(), {&cfi, &dynamic});
      if (managed && managed->frameUnwinder()) unwinders.push_back(managed->frameUnwinder());
      unwinders.push_back(&badCall);
      if (!windows) unwinders.push_back(&framePointer);
      unwinders.push_back(&scan);
    }
    StackWalker walker(target, *info, unwinders, options.limits, options.start);
    while (auto frame = walker.next()) thread.physicalFrames.push_back(std::move(*frame));
    thread.stopReason = walker.stopReason();
    thread.stopDetail = walker.stopDetail();
    const std::vector<Frame> &physical = thread.physicalFrames;
    std::vector<std::vector<std::vector<FunctionArgument>>> arguments;
    if (options.arguments) {
      FrameArguments reader(target, symbolizer, physical);
      arguments.resize(physical.size());
      // From the outermost frame in: a frame's entry values build on its caller's.
      for (size_t i = physical.size(); i-- > 0;) arguments[i] = reader.at(i);
    }
    for (size_t i = 0; i < physical.size(); ++i) {
      std::optional<uint64_t> callerSp;
      if (i + 1 < physical.size()) callerSp = physical[i + 1].sp;
      if (!managed || !managed->addEntries(thread, physical[i], callerSp))
        addEntries(thread, physical[i], symbolizer, target, dynamic, arguments.empty() ? nullptr : &arguments[i]);
    }
    if (options.managedOnly) keepManagedOnly(thread);
    printer.thread(thread);
  }
  printer.end(report);
}

} // namespace stackwalk
