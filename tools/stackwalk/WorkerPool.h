// Dumps walked in worker processes, so that one dump that crashes the walk,
// hangs it or exhausts memory costs only its own report. A worker is forked
// once and walks dump after dump (keeping its caches, as one process would);
// the supervisor hands out dumps, collects each report as it is printed,
// enforces the limits, replaces a worker that dies, and delivers every
// dump's outcome in the order given as soon as it and those before it are done.
#pragma once

#include "DumpFailure.h"
#include "ReportSpool.h"

#include <chrono>
#include <functional>
#include <optional>
#include <ostream>

namespace stackwalk {

struct WorkerLimits {
  unsigned workers = 1;
  std::chrono::seconds timeout{0}; // per dump; 0: none
  uint64_t maxMemoryMiB = 0;       // a worker's anonymous resident memory; 0: none
};

// In a worker: walk dump `index`, printing its report on `out`.
using WalkInWorker = std::function<std::optional<DumpFailure>(size_t index, std::ostream &out)>;
// In the supervisor: dump `index` is done, in order.
using DeliverOutcome = std::function<void(size_t index, ReportSpool &report, const std::optional<DumpFailure> &failure)>;

void runInWorkers(size_t dumps, const WorkerLimits &limits, const WalkInWorker &walk, const DeliverOutcome &deliver);

} // namespace stackwalk
