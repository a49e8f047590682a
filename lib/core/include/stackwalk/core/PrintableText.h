// Text from a dump made safe for a terminal. Every string a dump supplies
// (module paths, thread and function names, exception messages, notes) passes
// through printable() before it is printed as text, so a hostile dump can
// neither drive the terminal (ESC sequences, C1 controls such as 0x9B CSI)
// nor reorder what a reader sees (bidirectional overrides and isolates).
// JSON needs none of this: its writer escapes controls and keeps the text.
#pragma once

#include <string>
#include <string_view>

namespace stackwalk {

// `text` with every control and format character escaped: C0 and DEL as
// \xNN; bytes that are not UTF-8 (a raw 0x9B) as \xNN; C1 controls, bidi
// embeddings, overrides, isolates and marks, zero-width and line-separator
// characters as \u{XXXX}. Everything else, UTF-8 included, is kept.
std::string printable(std::string_view text);

} // namespace stackwalk
