// A thread's last thrown managed exception, as SOS's `!threads` and `!pe`
// and ClrMD's ClrThread.CurrentException show it: the Thread's
// LastThrownObject handle (Thread.md), the exception object's fields (the
// Exception contract, Exception.md) and its type's name (RuntimeTypeSystem).
#pragma once

#include "stackwalk/frames/MethodNames.h"
#include "stackwalk/frames/RuntimeData.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stackwalk::frames {

// Every field that reads is kept: a triage dump holds no strings, so the
// message may be missing where the type and HResult are not.
struct ManagedException {
  uint64_t object = 0;
  std::optional<std::string> type;    // Namespace.Type; nullopt: its MethodTable cannot be named
  std::optional<std::string> message; // nullopt: _message is null, or (see note) unreadable
  int32_t hresult = 0;
  std::string note;                   // the fields that could not be read, and why
};

// The exception, then its inner exceptions in order (at most
// MaxInnerExceptions of them); none when the thread has thrown none.
struct ManagedExceptionChain {
  std::vector<ManagedException> exceptions;
  std::string problem; // why the chain ends early: a handle, object or field that does not read
};
constexpr size_t MaxInnerExceptions = 16;
ManagedExceptionChain lastThrownException(const RuntimeData &data, MethodNames &names, uint64_t thread);

} // namespace stackwalk::frames
