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

struct ManagedException {
  uint64_t object = 0;
  std::string type;                   // Namespace.Type
  std::optional<std::string> message; // nullopt: _message is null
  int32_t hresult = 0;
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
