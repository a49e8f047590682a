#include "stackwalk/core/Demangle.h"

#include "llvm/Demangle/Demangle.h"

#include <libiberty/demangle.h>

#include <cstdlib>
#include <memory>

namespace stackwalk {
namespace {

// A name libiberty demangled, or empty where it did not (it returns null).
std::string byLibiberty(char *(*demangler)(const char *, int), std::string_view mangled) {
  std::string name(mangled); // a C string
  std::unique_ptr<char, decltype(&std::free)> result(demangler(name.c_str(), DMGL_PARAMS | DMGL_ANSI), &std::free);
  return result ? std::string(result.get()) : std::string();
}

} // namespace

std::string demangledName(std::string_view mangled) {
  // libiberty reads C strings: a name with a NUL in it is no Rust or D name.
  if (mangled.find('\0') == std::string_view::npos) {
    // Rust's legacy form: _ZN, the path, a last component "h" + 16 hex digits, E
    // (rust_demangle refuses anything else, v0 names aside, which LLVM reads).
    if (mangled.starts_with("_ZN") && mangled.ends_with('E'))
      if (std::string rust = byLibiberty(rust_demangle, mangled); !rust.empty()) return rust;
    if (mangled.starts_with("_D"))
      if (std::string d = byLibiberty(dlang_demangle, mangled); !d.empty()) return d;
  }
  return llvm::demangle(mangled);
}

} // namespace stackwalk
