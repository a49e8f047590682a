// The project's one way to make an llvm::Error that carries a message: for a
// failure the caller must act on (docs/DESIGN.md, "Errors"). A condition the
// report only has to mention is a warning or a note instead.
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <system_error>

namespace stackwalk {

inline llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

// A request the dump cannot satisfy (a thread it does not have): the user's
// mistake rather than the dump's, so the command exits as for a usage error.
inline llvm::Error failRequest(const llvm::Twine &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), message);
}
inline bool isRequestError(const llvm::ErrorInfoBase &error) {
  return error.convertToErrorCode() == std::errc::invalid_argument;
}

} // namespace stackwalk
