// Function names as people read them, from the names compilers emit.
//
// LLVM 19's demanglers read C++ (Itanium and Microsoft) and Rust's v0 names,
// but not two kinds found in real crash stacks: Rust's legacy names (the
// default until Rust 2024; Itanium in form, so LLVM demangles them half-way:
// `std::thread::JoinInner$LT$T$GT$::join::h79faeae37ea33044`) and D's (LLVM's
// D demangler gives up at the first function type: `_D3fib3recFiZv`). GNU
// libiberty's demanglers read both, as gdb, nm -C and c++filt do
// (`std::thread::JoinInner<T>::join`, `fib.rec(int)`): they are used for
// those names only, so every other name reads as before.
#pragma once

#include <string>
#include <string_view>

namespace stackwalk {

std::string demangledName(std::string_view mangled);

} // namespace stackwalk
