#include "stackwalk/walk/FunctionName.h"

#include <catch2/catch.hpp>

using stackwalk::signatureName;

TEST_CASE("signature names drop parameters, qualifiers and return types") {
  CHECK(signatureName("store_field") == "store_field");
  CHECK(signatureName("crash(int)") == "crash");
  CHECK(signatureName("Widget::draw(Canvas&) const") == "Widget::draw");
  CHECK(signatureName("Widget::move() &&") == "Widget::move");
  CHECK(signatureName("void ns::f<int>(int)") == "ns::f<int>");
  CHECK(signatureName("int __cdecl main(int, char**)") == "main");
  CHECK(signatureName("System.Threading.Thread.Sleep(Int32)") == "System.Threading.Thread.Sleep");
  CHECK(signatureName("(anonymous namespace)::worker(void*)") == "(anonymous namespace)::worker");
}

TEST_CASE("MSVC's quoted names keep their spaces") {
  // As Breakpad's .sym files and LLVM's Microsoft demangler give them.
  CHECK(signatureName("`anonymous namespace'::CrashFunction") == "`anonymous namespace'::CrashFunction");
  CHECK(signatureName("void __cdecl `anonymous namespace'::worker(void *)") == "`anonymous namespace'::worker");
  CHECK(signatureName("`dynamic initializer for 'table''") == "`dynamic initializer for 'table''");
  CHECK(signatureName("Widget::`scalar deleting destructor'(unsigned int)") ==
        "Widget::`scalar deleting destructor'");
  // Outside a backtick's quote an apostrophe is text: LLVM's Itanium lambdas.
  CHECK(signatureName("void f()::'lambda'(int)::operator()(int) const") == "f()::'lambda'(int)::operator()");
  // Without an apostrophe a backtick is text: .NET's generic arity.
  CHECK(signatureName("Task`1 Cache`1.Load(String, Int32)") == "Cache`1.Load");
}

TEST_CASE("lambdas, functors, operators and templates keep their identity") {
  CHECK(signatureName("Writer::operator()(int)") == "Writer::operator()");
  CHECK(signatureName("main::{lambda(int)#1}::operator()(int) const") == "main::{lambda(int)#1}::operator()");
  CHECK(signatureName("main::$_0::operator()() const") == "main::$_0::operator()");
  CHECK(signatureName("std::function<void (int)>::operator()(int) const") == "std::function<void (int)>::operator()");
  CHECK(signatureName("std::vector<int, std::allocator<int> >::push_back(int const&)") ==
        "std::vector<int, std::allocator<int> >::push_back");
  CHECK(signatureName("bool operator<<int>(Box<int> const&, Box<int> const&)") == "operator<<int>");
  CHECK(signatureName("Stream::operator<<(int)") == "Stream::operator<<");
  CHECK(signatureName("Ptr::operator->() const") == "Ptr::operator->");
  CHECK(signatureName("operator new(unsigned long)") == "operator new");
  CHECK(signatureName("Value::operator bool() const") == "Value::operator bool");
  // Different lambdas and instances stay apart.
  CHECK(signatureName("main::{lambda(int)#1}::operator()(int) const") !=
        signatureName("main::{lambda(int)#2}::operator()(int) const"));
  CHECK(signatureName("Box<int>::get()") != signatureName("Box<long>::get()"));
}

TEST_CASE("what does not parse is kept whole") {
  CHECK(signatureName("") == "");
  CHECK(signatureName("broken(int") == "broken(int");
  CHECK(signatureName("f)") == "f)");
}
