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

bool isBinaryOperator(llvm::StringRef token) {
  return token.size() == 1 && llvm::StringRef("+-*/%@").contains(token[0]);
}

// A program's tokens, split on spaces. Microsoft's DIA writes some frame data
// programs with no space after an assignment ("... + =$eip $T0 4 + ^ ="), and
// Breakpad's evaluator takes such a token as "=" and what follows.
llvm::SmallVector<llvm::StringRef, 32> programTokens(llvm::StringRef program) {
  llvm::SmallVector<llvm::StringRef, 32> split, tokens;
  program.split(split, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef token : split) {
    if (token.size() > 1 && token.front() == '=') {
      tokens.push_back(token.take_front());
      token = token.drop_front();
    }
    tokens.push_back(token);
  }
  return tokens;
}

} // namespace

std::optional<uint64_t> evaluatePostfix(llvm::StringRef expression,
                                        llvm::function_ref<std::optional<uint64_t>(llvm::StringRef)> variable,
                                        llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer) {
  llvm::SmallVector<uint64_t, 8> stack;
  llvm::SmallVector<llvm::StringRef, 16> tokens;
  expression.split(tokens, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef token : tokens) {
    if (isBinaryOperator(token)) {
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

bool runPostfixProgram(llvm::StringRef program, const PostfixVariables &inputs, PostfixVariables &assigned,
                       llvm::function_ref<std::optional<uint64_t>(uint64_t)> readPointer, unsigned width) {
  uint64_t mask = width >= 8 ? ~uint64_t(0) : (uint64_t(1) << (width * 8)) - 1;
  // An operand is a value, or a name still to be looked up (or assigned).
  struct Operand {
    std::optional<uint64_t> value;
    llvm::StringRef name;
  };
  llvm::SmallVector<Operand, 8> stack;
  auto valueOf = [&](const Operand &operand) -> std::optional<uint64_t> {
    if (operand.value) return operand.value;
    for (const PostfixVariables *variables : {static_cast<const PostfixVariables *>(&assigned), &inputs})
      if (auto found = variables->find(operand.name); found != variables->end()) return found->second;
    return std::nullopt;
  };
  for (llvm::StringRef token : programTokens(program)) {
    if (isBinaryOperator(token) || token == "^" || token == "=") {
      size_t needed = token == "^" ? 1 : 2;
      if (stack.size() < needed) return false;
      std::optional<uint64_t> b = valueOf(stack.back());
      stack.pop_back();
      if (!b) return false;
      if (token == "^") {
        std::optional<uint64_t> read = readPointer(*b & mask);
        if (!read) return false;
        stack.push_back({*read & mask, {}});
        continue;
      }
      Operand a = stack.pop_back_val();
      if (token == "=") {
        if (a.value || !a.name.starts_with("$")) return false;
        assigned[a.name.str()] = *b;
        continue;
      }
      std::optional<uint64_t> left = valueOf(a);
      std::optional<uint64_t> value = left ? apply(token[0], *left, *b) : std::nullopt;
      if (!value) return false;
      stack.push_back({*value & mask, {}});
    } else if (std::optional<uint64_t> value = number(token)) {
      stack.push_back({*value & mask, {}});
    } else {
      stack.push_back({std::nullopt, token});
    }
  }
  return stack.empty();
}

} // namespace stackwalk
