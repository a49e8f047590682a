// Shared by the fuzz targets that load whole dumps: the production walk
// (ProcessWalk, with the unwinder policy every walk uses) of every thread,
// and the printers. No module file is read from the host (as --no-host-files:
// no sysroot, no debug root); images from the dump's own memory
// (the vDSO, GDB JIT objects, PE images rebuilt from memory) still are.
#pragma once

#include "Printers.h"

#include "stackwalk/core/DumpFile.h"
#include "stackwalk/walk/ProcessWalk.h"

#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

namespace stackwalk::fuzz {

inline WalkOptions walkOptions(bool arguments) {
  WalkOptions options;
  options.allThreads = true;
  options.limits.maxFrames = 64;
  options.maxThreads = 64;
  options.arguments = arguments;
  options.search.hostFiles = false; // as --no-host-files: a mutated path must not open host files
  return options;
}

// Walks every thread; with `print`, prints the report in every format.
inline void walkProcess(std::unique_ptr<Target> target, bool print = false) {
  WalkSession session;
  auto walk = ProcessWalk::open(std::move(target), "fuzz", walkOptions(/*arguments=*/print), session);
  if (!walk) return llvm::consumeError(walk.takeError());
  std::vector<ReportThread> threads;
  while (auto thread = (*walk)->nextThread()) threads.push_back(std::move(*thread));
  if (!print) return;
  std::ostringstream out;
  PrintOptions printOptions;
  printOptions.registers = printOptions.rawContext = true;
  for (auto *make : {makeTextPrinter, makeJsonPrinter, makeSummaryPrinter}) {
    std::unique_ptr<ReportPrinter> printer = make(out, printOptions);
    printer->begin((*walk)->report());
    for (const ReportThread &thread : threads) printer->thread(thread);
    printer->end((*walk)->finish());
  }
}

// The input as the command opens a dump file: its bytes for the loaders, and
// a descriptor (a memory file holding them) for the memory reads' blocks.
inline std::shared_ptr<const DumpFile> dumpFileOf(const uint8_t *data, size_t size) {
  int descriptor = memfd_create("fuzz", MFD_CLOEXEC);
  if (descriptor >= 0 && write(descriptor, data, size) != ssize_t(size)) {
    close(descriptor);
    descriptor = -1;
  }
  auto bytes = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  return std::make_shared<const DumpFile>(std::move(bytes), descriptor);
}

} // namespace stackwalk::fuzz
