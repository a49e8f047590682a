// What stackwalk reports about a dump, independent of how it is printed: the
// walked threads with their frames symbolized and inline calls expanded.
#pragma once

#include "stackwalk/core/StackWalker.h"
#include "stackwalk/core/Symbolizer.h"
#include "stackwalk/core/Target.h"

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
  const RegisterFile *registers = nullptr; // physical frames only
  bool signalTrampoline = false;
};

struct ReportThread {
  uint64_t tid = 0;
  std::optional<std::string> name;
  bool crashed = false;
  std::vector<Frame> physicalFrames; // owns the registers the entries point to
  std::vector<ReportFrame> frames;
  StopReason stopReason = StopReason::None;
  std::string stopDetail;
};

struct ReportOptions {
  std::vector<uint64_t> threadIds; // empty: see allThreads
  bool allThreads = false;
  WalkLimits limits;
};

struct Report {
  std::string dumpPath;
  const Target *target = nullptr;
  std::vector<ReportThread> threads;
  std::vector<std::string> warnings;
};

// Walks the selected threads: the ones named, all of them, or by default the
// crashing thread (else the first).
Report buildReport(const std::string &dumpPath, const Target &target, const ReportOptions &options);

} // namespace stackwalk
