#include "stackwalk/core/X86NameDecoration.h"

namespace stackwalk {
namespace {

// "@8" at the end of a stdcall or fastcall name: an '@' and only digits after it.
llvm::StringRef withoutParameterBytes(llvm::StringRef name) {
  size_t at = name.rfind('@');
  if (at == llvm::StringRef::npos || at + 1 == name.size()) return name;
  llvm::StringRef digits = name.substr(at + 1);
  return digits.find_first_not_of("0123456789") == llvm::StringRef::npos ? name.take_front(at) : name;
}

} // namespace

std::string undecoratedX86Name(llvm::StringRef name) {
  if (name.size() < 2 || (name.front() != '_' && name.front() != '@')) return name.str();
  llvm::StringRef bare = name.drop_front();
  if (name.front() == '@') {
    llvm::StringRef fastcall = withoutParameterBytes(bare);
    return fastcall.size() < bare.size() ? fastcall.str() : name.str();
  }
  return withoutParameterBytes(bare).str();
}

} // namespace stackwalk
