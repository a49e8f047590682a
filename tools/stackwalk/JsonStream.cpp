#include "JsonStream.h"

#include <charconv>

namespace stackwalk {
namespace {

// Text nlohmann writes as it is (ensure_ascii off): no quote, backslash or
// control character, nothing past ASCII that it would check as UTF-8.
bool writtenAsIs(std::string_view text) {
  for (unsigned char c : text)
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return false;
  return true;
}

} // namespace

JsonStream::JsonStream(std::ostream &out, bool compact, size_t depth)
    : out_(out), compact_(compact), baseDepth_(depth) {}

void JsonStream::newLine(size_t depth) {
  text_ += '\n';
  text_.append(depth, ' ');
}

// The separator and indentation before the open object's or array's next item.
void JsonStream::nextItem() {
  if (!empty_.back()) text_ += ',';
  empty_.back() = false;
  if (!compact_) newLine(baseDepth_ + empty_.size());
}

// An array's element is an item; a member's value follows its key, and the
// document itself follows nothing.
void JsonStream::beforeValue() {
  if (afterKey_) afterKey_ = false;
  else if (!empty_.empty()) nextItem();
}

JsonStream &JsonStream::key(std::string_view name) {
  nextItem();
  quoted(name);
  text_ += compact_ ? ":" : ": ";
  afterKey_ = true;
  return *this;
}

JsonStream &JsonStream::open(char bracket) {
  beforeValue();
  text_ += bracket;
  empty_.push_back(true);
  return *this;
}

// nlohmann writes an empty object or array as {} or [], a full one with its
// closing bracket on a line of its own.
JsonStream &JsonStream::close(char bracket) {
  bool wasEmpty = empty_.back();
  empty_.pop_back();
  if (!wasEmpty && !compact_) newLine(baseDepth_ + empty_.size());
  text_ += bracket;
  return *this;
}

JsonStream &JsonStream::string(std::string_view text) {
  beforeValue();
  quoted(text);
  return *this;
}

void JsonStream::quoted(std::string_view text) {
  if (writtenAsIs(text)) {
    text_ += '"';
    text_ += text;
    text_ += '"';
  } else {
    // Names, paths and arguments come from the dump and need not be UTF-8:
    // nlohmann escapes them and replaces what is not UTF-8, as it always has.
    text_ += Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

JsonStream &JsonStream::number(uint64_t value) {
  beforeValue();
  char digits[24];
  text_.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  return *this;
}

JsonStream &JsonStream::number(int64_t value) {
  beforeValue();
  char digits[24];
  text_.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  return *this;
}

JsonStream &JsonStream::boolean(bool value) {
  beforeValue();
  text_ += value ? "true" : "false";
  return *this;
}

JsonStream &JsonStream::null() {
  beforeValue();
  text_ += "null";
  return *this;
}

JsonStream &JsonStream::value(const Json &json) {
  beforeValue();
  if (compact_) {
    text_ += json.dump(-1, ' ', false, Json::error_handler_t::replace);
    return *this;
  }
  std::string lines = json.dump(1, ' ', false, Json::error_handler_t::replace);
  size_t depth = baseDepth_ + empty_.size();
  for (size_t line = 0; line < lines.size();) {
    size_t newline = std::min(lines.find('\n', line), lines.size() - 1);
    text_.append(lines, line, newline + 1 - line);
    if (lines[newline] == '\n') text_.append(depth, ' ');
    line = newline + 1;
  }
  return *this;
}

void JsonStream::flush() {
  out_ << text_;
  text_.clear();
}

} // namespace stackwalk
