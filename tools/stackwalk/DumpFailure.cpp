#include "DumpFailure.h"
#include "ExitCodes.h"

#include "stackwalk/core/Fail.h"

namespace stackwalk {

DumpFailure DumpFailure::fromError(llvm::Error error) {
  DumpFailure failure;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &e) {
    failure.message = e.message();
    if (isRequestError(e)) failure.kind = Kind::Request;
  });
  return failure;
}

int DumpFailure::exitCode() const { return kind == Kind::Request ? ExitUsage : ExitUnreadable; }

const char *DumpFailure::kindName() const {
  switch (kind) {
  case Kind::Unreadable: return "unreadable";
  case Kind::Request: return "request";
  case Kind::Crashed: return "crashed";
  case Kind::Timeout: return "timeout";
  case Kind::OutOfMemory: return "out_of_memory";
  }
  return "unreadable";
}

} // namespace stackwalk
