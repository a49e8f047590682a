#include "stackwalk/core/PrintableText.h"

#include "llvm/Support/ConvertUTF.h"

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

// `value` in lower-case hex, at least `digits` digits: by hand, not snprintf,
// which a hostile dump's strings (8 MiB of binary bytes, each escaped) made
// most of a walk's time.
void appendHex(std::string &out, llvm::UTF32 value, unsigned digits) {
  static constexpr char Hex[] = "0123456789abcdef";
  while (digits < 8 && value >> (4 * digits)) ++digits;
  for (unsigned shift = 4 * digits; shift;) {
    shift -= 4;
    out.push_back(Hex[(value >> shift) & 0xf]);
  }
}

void appendByteEscape(std::string &out, llvm::UTF8 byte) {
  out += "\\x";
  appendHex(out, byte, 2);
}

void appendCodePointEscape(std::string &out, llvm::UTF32 c) {
  out += "\\u{";
  appendHex(out, c, 4);
  out.push_back('}');
}

// Printable ASCII, which every name and path is almost all of: copied in runs.
bool isPlainAscii(llvm::UTF8 byte) { return byte >= 0x20 && byte < 0x7f; }

// The code point at `next` (or its first byte, when it is not UTF-8), escaped where it must be.
const llvm::UTF8 *appendCodePoint(std::string &out, const llvm::UTF8 *next, const llvm::UTF8 *end) {
  // One code point at a time, so that an invalid byte costs only itself.
  unsigned length = llvm::getNumBytesForUTF8(*next);
  llvm::UTF32 c = 0;
  llvm::UTF32 *target = &c;
  const llvm::UTF8 *start = next;
  if (length > unsigned(end - next) || !llvm::isLegalUTF8Sequence(next, next + length) ||
      llvm::ConvertUTF8toUTF32(&next, next + length, &target, target + 1, llvm::strictConversion) != llvm::conversionOK) {
    appendByteEscape(out, *start);
    return start + 1;
  }
  if (c < 0x80 && !isControlOrFormat(c)) out.push_back(char(c));
  else if (c < 0x80) appendByteEscape(out, llvm::UTF8(c));
  else if (isControlOrFormat(c)) appendCodePointEscape(out, c);
  else out.append(reinterpret_cast<const char *>(start), length);
  return next;
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto *next = reinterpret_cast<const llvm::UTF8 *>(text.data());
  auto *end = next + text.size();
  while (next < end) {
    const llvm::UTF8 *run = next;
    while (next < end && isPlainAscii(*next)) ++next;
    out.append(reinterpret_cast<const char *>(run), next - run);
    if (next < end) next = appendCodePoint(out, next, end);
  }
  return out;
}

} // namespace stackwalk
