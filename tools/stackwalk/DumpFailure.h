// Why a dump has no report: it could not be read, the request does not fit it,
// or (in an isolated walk) the worker walking it crashed, ran out of time or
// of memory. Each kind has its exit code and its JSON error object.
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace stackwalk {

struct DumpFailure {
  enum class Kind { Unreadable, Request, Crashed, Timeout, OutOfMemory };

  // From the walk's error: a request error (a thread the dump lacks) is a usage error.
  static DumpFailure fromError(llvm::Error error);

  Kind kind = Kind::Unreadable;
  std::string message;
  int signal = 0; // Crashed: the signal that ended the worker

  // 2 for a request the dump cannot answer, else 3 (Run.h).
  int exitCode() const;
  // "unreadable", "request", "crashed", "timeout", "out_of_memory": the JSON error's kind.
  const char *kindName() const;
};

} // namespace stackwalk
