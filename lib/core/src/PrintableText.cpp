#include "stackwalk/core/PrintableText.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstdio>

namespace stackwalk {
namespace {

// Code points a terminal or a bidi algorithm acts on instead of showing.
bool isControlOrFormat(llvm::UTF32 c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) ||      // C0, DEL, C1
         c == 0x061c ||                               // Arabic letter mark
         (c >= 0x200b && c <= 0x200f) ||              // zero-width characters, LRM, RLM
         (c >= 0x2028 && c <= 0x202e) ||              // line/paragraph separators, embeddings, overrides
         (c >= 0x2060 && c <= 0x2069) ||              // word joiner, invisible operators, isolates
         c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb); // BOM, interlinear annotations
}

void appendEscape(std::string &out, const char *format, unsigned value) {
  char escape[16];
  std::snprintf(escape, sizeof escape, format, value);
  out += escape;
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto *next = reinterpret_cast<const llvm::UTF8 *>(text.data());
  auto *end = next + text.size();
  while (next < end) {
    // One code point at a time, so that an invalid byte costs only itself.
    unsigned length = llvm::getNumBytesForUTF8(*next);
    llvm::UTF32 c = 0;
    llvm::UTF32 *target = &c;
    const llvm::UTF8 *start = next;
    if (length > unsigned(end - next) || !llvm::isLegalUTF8Sequence(next, next + length) ||
        llvm::ConvertUTF8toUTF32(&next, next + length, &target, target + 1, llvm::strictConversion) != llvm::conversionOK) {
      appendEscape(out, "\\x%02x", *start);
      next = start + 1;
      continue;
    }
    if (c < 0x80 && !isControlOrFormat(c)) out.push_back(char(c));
    else if (c < 0x80) appendEscape(out, "\\x%02x", c);
    else if (isControlOrFormat(c)) appendEscape(out, "\\u{%04x}", c);
    else out.append(reinterpret_cast<const char *>(start), length);
  }
  return out;
}

} // namespace stackwalk
