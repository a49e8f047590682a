// The project's one way to make an llvm::Error that carries a message: for a
// failure the caller must act on (docs/DESIGN.md, "Errors"). A condition the
// report only has to mention is a warning or a note instead.
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace stackwalk {

inline llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace stackwalk
