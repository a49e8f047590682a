// Breakpad's postfix expressions, as STACK CFI rules write them
// (".cfa: $rsp 16 +", ".ra: .cfa -8 + ^"): numbers, names looked up by the
// caller, the binary operators + - * / % and @ (align down), and ^ (read a
// pointer). Nothing packaged evaluates them, so this is ours.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace stackwalk {

// The value of the expression; nullopt when it is malformed, names a value
// that is not known, divides by zero or reads memory the dump does not hold.
std::optional<uint64_t> evaluatePostfix(llvm::StringRef expression,
                                        llvm::function_ref<std::optional<uint64_t>(llvm::StringRef)> variable,
                                        llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer);

} // namespace stackwalk
