// A function's name as signatures use it: the whole qualified name, without
// its parameter list, qualifiers or return type, so that overloads that a
// crash does not tell apart do not split a bucket, while lambdas, functors,
// operators and template instances keep their identity:
//   "void ns::f<int>(int) const"              -> "ns::f<int>"
//   "Writer::operator()(int)"                 -> "Writer::operator()"
//   "main::{lambda(int)#1}::operator()(int)"  -> "main::{lambda(int)#1}::operator()"
//   "(anonymous namespace)::g()"              -> "(anonymous namespace)::g"
//   "System.Threading.Thread.Sleep(Int32)"    -> "System.Threading.Thread.Sleep"
// Socorro's signature generation does the same to C++ frames.
#pragma once

#include <string>
#include <string_view>

namespace stackwalk {

std::string signatureName(std::string_view function);

} // namespace stackwalk
