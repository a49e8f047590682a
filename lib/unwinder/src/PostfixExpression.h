// Breakpad's postfix expressions, as STACK CFI rules write them
// (".cfa: $rsp 16 +", ".ra: .cfa -8 + ^"): numbers, names looked up by the
// caller, the binary operators + - * / % and @ (align down), and ^ (read a
// pointer); and the programs of STACK WIN records, which assign with =
// ("$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + ="). Nothing
// packaged evaluates them, so this is ours.
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace stackwalk {

// The value of the expression; nullopt when it is malformed, names a value
// that is not known, divides by zero or reads memory the dump does not hold.
std::optional<uint64_t> evaluatePostfix(llvm::StringRef expression,
                                        llvm::function_ref<std::optional<uint64_t>(llvm::StringRef)> variable,
                                        llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer);

using PostfixVariables = std::map<std::string, uint64_t, std::less<>>;

// Runs a STACK WIN program: each "<name> <expression> =" sets the variable
// `name` (which starts with $) in `assigned`. Operands are numbers or
// variables ("$ebp", "$T0", ".cbSavedRegs", ...), looked up in `assigned`,
// then in `inputs`; every value is cut to `width` bytes, as the 32-bit
// machine computes it. False when the program is malformed, reads a
// variable that is not set or memory the dump does not hold.
bool runPostfixProgram(llvm::StringRef program, const PostfixVariables &inputs, PostfixVariables &assigned,
                       llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer, unsigned width);

} // namespace stackwalk
