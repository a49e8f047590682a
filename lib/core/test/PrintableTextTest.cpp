#include "stackwalk/core/PrintableText.h"

#include <catch2/catch.hpp>

using stackwalk::printable;

TEST_CASE("printable keeps text people read", "[printable]") {
  CHECK(printable("libc.so.6!__GI_raise+0x10 [raise.c:51]") == "libc.so.6!__GI_raise+0x10 [raise.c:51]");
  CHECK(printable("Grüße/日本語/😀") == "Grüße/日本語/😀");
  CHECK(printable("") == "");
}

TEST_CASE("printable escapes C0 controls and DEL", "[printable]") {
  CHECK(printable("\x1b]0;PWNED\x07\x1b[2J") == "\\x1b]0;PWNED\\x07\\x1b[2J");
  CHECK(printable(std::string("a\0b\r\n\t\x7f", 7)) == "a\\x00b\\x0d\\x0a\\x09\\x7f");
}

TEST_CASE("printable escapes C1 controls raw and in UTF-8", "[printable]") {
  CHECK(printable("x\x9b" "31m") == "x\\x9b31m");         // a raw CSI byte, not UTF-8
  CHECK(printable("x\xc2\x9b" "31m") == "x\\u{009b}31m"); // U+009B
  CHECK(printable("\xc2\x85") == "\\u{0085}");            // NEL
}

TEST_CASE("printable escapes bidi and invisible format characters", "[printable]") {
  CHECK(printable("bidi-\xe2\x80\xaeos.exe") == "bidi-\\u{202e}os.exe");               // RLO
  CHECK(printable("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u{2066}x\\u{2069}");              // LRI, PDI
  CHECK(printable("a\xe2\x80\x8b" "b\xe2\x80\xa8" "c") == "a\\u{200b}b\\u{2028}c");    // ZWSP, LINE SEPARATOR
  CHECK(printable("\xef\xbb\xbf" "x") == "\\u{feff}x");                                 // BOM
}

TEST_CASE("printable escapes bytes that are not UTF-8, one at a time", "[printable]") {
  CHECK(printable("\xff\xfe" "a") == "\\xff\\xfea");
  CHECK(printable("\xe2\x80") == "\\xe2\\x80");                 // a truncated sequence
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");                 // an overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");        // a UTF-16 surrogate
}
