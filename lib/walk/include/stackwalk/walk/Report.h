// What stackwalk reports about a dump, independent of how it is printed: the
// walked threads with their frames symbolized and inline calls expanded.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/ModuleResolver.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/debuginfo/FrameArguments.h"
#include "stackwalk/frames/DotnetRuntime.h"
#include "stackwalk/frames/ManagedExceptions.h"
#include "stackwalk/unwinder/CfiUnwinder.h"
#include "stackwalk/unwinder/LibunwindDynamic.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

struct ReportFrame {
  unsigned index = 0;
  FrameKind kind = FrameKind::Native;
  bool inlined = false;
  FrameTrust trust = FrameTrust::Context;
  uint64_t ip = 0, sp = 0;
  const Module *module = nullptr;
  std::string function;
  std::optional<uint64_t> functionOffset;
  std::string file;
  std::optional<uint32_t> line;
  const RegisterFile *registers = nullptr; // physical frames and runtime Frames with a context
  bool signalTrampoline = false;
  std::string moduleName;                // managed frames: the assembly's file, where no Module maps the code
  std::optional<uint64_t> methodDesc;    // managed frames, and runtime Frames that name a method
  std::optional<uint64_t> frameAddress;  // runtime Frames
  std::string frameName;                 // runtime Frames: "InlinedCallFrame"
  std::string note;                      // why a managed name or MethodDesc is missing
  std::optional<std::vector<FunctionArgument>> arguments; // with --args, for functions DWARF describes
};

struct ReportThread {
  uint64_t tid = 0;
  std::optional<std::string> name;
  bool crashed = false;
  std::vector<Frame> physicalFrames; // owns the registers the entries point to
  std::vector<ReportFrame> frames;
  std::deque<RegisterFile> frameContexts; // the registers runtime Frames carry
  std::optional<uint32_t> managedThreadId;
  std::string managedNote; // why the managed part of the walk is incomplete
  // The runtime's last thrown exception on this thread, then its inner ones.
  std::vector<frames::ManagedException> lastThrown;
  StopReason stopReason = StopReason::None;
  std::string stopDetail;
};

struct ReportOptions {
  std::vector<uint64_t> threadIds; // empty: see allThreads
  bool allThreads = false;
  WalkLimits limits;
  std::optional<ManualStart> start; // for the one selected thread
  size_t maxThreads = 100000;       // threads walked at most; a hostile dump may claim millions
  bool managedOnly = false;         // only managed frames and runtime Frames (StackWalk.md's walk)
  bool arguments = false;           // function arguments from debug info (--args)
};

// The report's frame: everything but the threads, which are walked one at a
// time and handed to a printer so memory does not grow with the thread count.
struct Report {
  std::string dumpPath;
  const Target *target = nullptr;
  std::vector<const ThreadInfo *> threads; // selected, in print order
  std::vector<std::string> warnings;
  std::vector<DynamicProcedure> dynamicProcedures; // registered with libunwind at run time
  std::unique_ptr<frames::DotnetRuntime> runtime;  // the process's .NET runtime, if it has one we can read
};

class ReportPrinter {
public:
  virtual ~ReportPrinter() = default;
  virtual void begin(const Report &report) = 0;
  virtual void thread(const ReportThread &thread) = 0;
  virtual void end(const Report &report) = 0;
};

// What outlives one dump in a batch: module files with their symbols and
// call frame information, shared by the dumps one worker walks in turn.
struct WalkSession {
  explicit WalkSession(uint64_t maxDebugBytes) : symbolizer(maxDebugBytes) {}

  ImageCache images;
  Symbolizer symbolizer;
  CfiUnwinder cfi;

  // Drops what belongs to this dump only: images copied from its memory (the
  // vDSO), whose addresses a later dump's images may reuse.
  void endDump(const Target &target);
};

// Selects the threads: the ones named, all of them, or by default the
// crashing thread (else the first).
Report planReport(const std::string &dumpPath, const Target &target, const ReportOptions &options);

// Walks each selected thread and prints it before walking the next.
void writeReport(const Report &report, const ReportOptions &options, ReportPrinter &printer, WalkSession &session);

} // namespace stackwalk
