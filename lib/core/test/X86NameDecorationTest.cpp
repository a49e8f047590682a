#include "stackwalk/core/X86NameDecoration.h"

#include <catch2/catch.hpp>

using stackwalk::undecoratedX86Name;

TEST_CASE("x86 C decorations are removed: cdecl, stdcall, fastcall") {
  CHECK(undecoratedX86Name("_level3") == "level3");
  CHECK(undecoratedX86Name("_CloseHandle@4") == "CloseHandle");
  CHECK(undecoratedX86Name("@fastAdd@8") == "fastAdd");
  CHECK(undecoratedX86Name("__NLG_Return") == "_NLG_Return"); // the source's own underscore stays
}

TEST_CASE("names without a C decoration are left as they are") {
  CHECK(undecoratedX86Name("?level3@@YAHPAKH@Z") == "?level3@@YAHPAKH@Z"); // C++: for the demangler
  CHECK(undecoratedX86Name("level3") == "level3");
  CHECK(undecoratedX86Name("_") == "_");
  CHECK(undecoratedX86Name("@name") == "@name");       // no parameter bytes: no fastcall name
  CHECK(undecoratedX86Name("_name@") == "name@");      // an '@' without digits is part of the name
  CHECK(undecoratedX86Name("_a@b1") == "a@b1");
  CHECK(undecoratedX86Name("") == "");
}
