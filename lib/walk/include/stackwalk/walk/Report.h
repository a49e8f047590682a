// What a walk reports about a process, independent of how it is printed: the
// dump's header facts, and each walked thread as an ordered sequence of
// logical frames (native, inlined, managed, runtime Frames), each classified
// and named once. Frames own their data; `module` points into the Target,
// which outlives every report made from it.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Target.h"
#include "stackwalk/debuginfo/FrameArguments.h"
#include "stackwalk/frames/ManagedExceptions.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk {

// What the code of an entry is: native, managed, or one of the managed
// runtime's transition records (a capital-F Frame).
enum class FrameKind { Native, Managed, Runtime };

struct ReportFrame {
  unsigned index = 0;
  FrameKind kind = FrameKind::Native;
  bool inlined = false;
  // A function that tail-called the frame below it (TailCalls.h): no return
  // address of its own; ip is its jump, sp the caller's.
  bool tailCall = false;
  FrameTrust trust = FrameTrust::Context;
  uint64_t ip = 0, sp = 0;
  const Module *module = nullptr;
  std::string function;
  std::optional<uint64_t> functionOffset;
  std::string file;
  std::optional<uint32_t> line;
  std::optional<RegisterFile> registers; // physical frames, and runtime Frames that carry a context
  bool signalTrampoline = false;
  std::string moduleName;                // managed frames: the assembly's file, where no Module maps the code
  std::optional<uint64_t> methodDesc;    // managed frames, and runtime Frames that name a method
  std::optional<uint64_t> frameAddress;  // runtime Frames
  std::string frameName;                 // runtime Frames: "InlinedCallFrame"
  std::string note;                      // why a managed name or MethodDesc is missing
  std::optional<std::vector<FunctionArgument>> arguments; // with --args, for functions DWARF describes
  // With --args on 32-bit x86, for a physical frame DWARF does not describe:
  // the raw words above its return address (StackSlots.h), not arguments.
  std::vector<uint64_t> stackSlots;
};

struct ReportThread {
  uint64_t tid = 0;
  std::optional<std::string> name;
  bool crashed = false;
  std::vector<ReportFrame> frames;
  std::optional<uint32_t> managedThreadId;
  std::string managedNote; // why the managed part of the walk is incomplete
  // The runtime's last thrown exception on this thread, then its inner ones.
  std::vector<frames::ManagedException> lastThrown;
  StopReason stopReason = StopReason::None;
  std::string stopDetail;
  std::optional<FxsaveArea> fpState; // the context's x87 and SSE registers, for --registers
};

// A managed runtime found in the process, as the report names it.
struct RuntimeSummary {
  std::string kind;        // "coreclr"
  std::string displayName; // ".NET"
  std::string version;     // empty when unknown
  std::string module;      // the runtime's module
  uint64_t descriptorAddress = 0;
  std::string descriptorSource; // "dump", or the module file
  std::map<std::string, unsigned> contracts; // contract name -> version
};

// The report's frame: everything but the threads, which are walked one at a
// time (ProcessWalk::nextThread) so memory does not grow with the thread count.
struct Report {
  std::string dumpPath;
  const Target *target = nullptr;
  std::vector<const ThreadInfo *> threads; // selected, in print order
  std::vector<std::string> warnings;
  std::optional<RuntimeSummary> runtime; // the process's managed runtime, if it has one we can read
  // The crash's signature (Signature.h), from the crashing thread's own walk
  // whatever was asked to be shown; set by ProcessWalk::finish, null without
  // a crash.
  std::optional<std::string> signature;
};

} // namespace stackwalk
