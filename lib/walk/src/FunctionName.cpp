#include "stackwalk/walk/FunctionName.h"

#include <array>

namespace stackwalk {
namespace {

bool opens(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool closes(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

// Whether `<` or `>` at `at` belongs to an operator's name (operator<,
// operator<<=, operator->, operator>>), not to a template's brackets.
bool inOperatorName(std::string_view name, size_t at) {
  size_t start = at;
  while (start > 0 && (name[start - 1] == '<' || name[start - 1] == '>' || name[start - 1] == '-' ||
                       name[start - 1] == '='))
    --start;
  constexpr std::string_view Operator = "operator";
  return start >= Operator.size() && name.substr(start - Operator.size(), Operator.size()) == Operator;
}

// Trailing member-function qualifiers (" const", " &&", " noexcept", ...).
std::string_view withoutQualifiers(std::string_view name) {
  constexpr std::array<std::string_view, 5> Qualifiers = {" const", " volatile", " &&", " &", " noexcept"};
  for (bool changed = true; changed;) {
    changed = false;
    for (std::string_view qualifier : Qualifiers)
      if (name.size() > qualifier.size() && name.ends_with(qualifier)) {
        name.remove_suffix(qualifier.size());
        changed = true;
      }
  }
  return name;
}

// The name without the parenthesized list at its end: the parameters.
std::string_view withoutParameters(std::string_view name) {
  name = withoutQualifiers(name);
  if (!name.ends_with(')')) return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    char c = name[i];
    if ((c == '<' || c == '>') && inOperatorName(name, i)) continue;
    if (closes(c)) ++depth;
    else if (opens(c) && --depth == 0) {
      // "operator()" itself is no parameter list.
      if (i == 0 || name.substr(0, i).ends_with("operator")) return name;
      return name.substr(0, i);
    }
  }
  return name; // unbalanced: keep it whole
}

// How deep in MSVC's quotes the text after `name[at]` lies, given `depth` before
// it: its undecorated names quote with a backtick and an apostrophe ("`anonymous
// namespace'", "`vftable'"), and quote again inside ("`dynamic initializer for
// 'x''", where an apostrophe after a space opens). Outside a backtick's quote an
// apostrophe is text (LLVM's Itanium "'lambda'(int)"); without an apostrophe a
// backtick is text too (.NET's generic arity, "List`1").
int msvcQuoteDepth(std::string_view name, size_t at, int depth) {
  if (name[at] == '`') return name.find('\'', at) == std::string_view::npos ? depth : depth + 1;
  if (name[at] != '\'' || depth == 0) return depth;
  bool opensInner = at > 0 && (name[at - 1] == ' ' || name[at - 1] == '`');
  return opensInner ? depth + 1 : depth - 1;
}

// The name without a return type before it: text up to the last space
// outside brackets and quotes, unless that space is part of the name
// ("operator new", "operator bool"; "(anonymous namespace)" is inside brackets).
std::string_view withoutReturnType(std::string_view name) {
  int depth = 0, quoted = 0;
  size_t cut = std::string_view::npos;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    quoted = msvcQuoteDepth(name, i, quoted);
    if ((c == '<' || c == '>') && inOperatorName(name, i)) continue;
    if (opens(c)) ++depth;
    else if (closes(c)) --depth;
    else if (c == ' ' && depth == 0 && quoted == 0 && !name.substr(0, i).ends_with("operator")) cut = i;
  }
  return cut == std::string_view::npos ? name : name.substr(cut + 1);
}

} // namespace

std::string signatureName(std::string_view function) {
  return std::string(withoutReturnType(withoutParameters(function)));
}

} // namespace stackwalk
