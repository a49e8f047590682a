// The Thread contract (dotnet/runtime docs/design/datacontracts/Thread.md):
// the runtime's ThreadStore lists a Thread object for every thread that has
// run managed code; each knows its OS thread id, its managed thread id and
// the head of its Frame chain.
#pragma once

#include "stackwalk/frames/RuntimeData.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stackwalk::frames {

struct RuntimeThread {
  uint64_t address = 0;
  uint64_t osId = 0;      // the Linux tid / Windows thread id
  uint32_t managedId = 0; // Environment.CurrentManagedThreadId
  uint64_t firstFrame = 0;
};

struct RuntimeThreadList {
  std::vector<RuntimeThread> threads;
  std::string problem; // why the list ends early, if it does
};

RuntimeThreadList readRuntimeThreads(const RuntimeData &data);

} // namespace stackwalk::frames
