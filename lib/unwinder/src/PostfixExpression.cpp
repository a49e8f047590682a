#include "PostfixExpression.h"

#include "llvm/ADT/SmallVector.h"

namespace stackwalk {
namespace {

std::optional<uint64_t> number(llvm::StringRef token) {
  bool negative = token.consume_front("-");
  uint64_t value;
  unsigned radix = token.consume_front("0x") ? 16 : 10;
  if (token.empty() || token.getAsInteger(radix, value)) return std::nullopt;
  return negative ? uint64_t(0) - value : value;
}

std::optional<uint64_t> apply(char op, uint64_t a, uint64_t b) {
  switch (op) {
  case '+': return a + b;
  case '-': return a - b;
  case '*': return a * b;
  case '/': return b ? std::optional<uint64_t>(a / b) : std::nullopt;
  case '%': return b ? std::optional<uint64_t>(a % b) : std::nullopt;
  // Align down to a power of two (a stack realigned by `and rsp, -16`).
  case '@': return b && (b & (b - 1)) == 0 ? std::optional<uint64_t>(a & ~(b - 1)) : std::nullopt;
  }
  return std::nullopt;
}

} // namespace

std::optional<uint64_t> evaluatePostfix(llvm::StringRef expression,
                                        llvm::function_ref<std::optional<uint64_t>(llvm::StringRef)> variable,
                                        llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer) {
  llvm::SmallVector<uint64_t, 8> stack;
  llvm::SmallVector<llvm::StringRef, 16> tokens;
  expression.split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef token : tokens) {
    if (token.size() == 1 && llvm::StringRef("+-*/%@").contains(token[0])) {
      if (stack.size() < 2) return std::nullopt;
      uint64_t b = stack.pop_back_val(), a = stack.pop_back_val();
      std::optional<uint64_t> value = apply(token[0], a, b);
      if (!value) return std::nullopt;
      stack.push_back(*value);
    } else if (token == "^") {
      if (stack.empty()) return std::nullopt;
      std::optional<uint64_t> value = readPointer(stack.back());
      if (!value) return std::nullopt;
      stack.back() = *value;
    } else if (std::optional<uint64_t> value = number(token)) {
      stack.push_back(*value);
    } else if (std::optional<uint64_t> named = variable(token)) {
      stack.push_back(*named);
    } else {
      return std::nullopt;
    }
  }
  if (stack.size() != 1) return std::nullopt;
  return stack.back();
}

} // namespace stackwalk
