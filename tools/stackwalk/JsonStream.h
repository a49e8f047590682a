// One JSON document written as it is produced, formatted exactly as
// nlohmann's dump() of the whole would be (compact, or indented one space a
// level), so that a report's frames need not become a tree of nlohmann
// values first: building, printing and freeing that tree was 39% of a batch
// of 1,000 small dumps' time (perf, --json --jobs 1). Values that are rare or
// nested deep (registers, arguments, exceptions) are still nlohmann values,
// written through value(). Nothing checks that keys and values alternate:
// the printer's code says the shape.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace stackwalk {

class JsonStream {
public:
  using Json = nlohmann::ordered_json;

  // `depth`: the levels the document starts at, when it is part of another.
  JsonStream(std::ostream &out, bool compact, size_t depth = 0);
  ~JsonStream() { flush(); }

  // The next member's name, in an object.
  JsonStream &key(std::string_view name);
  JsonStream &beginObject() { return open('{'); }
  JsonStream &endObject() { return close('}'); }
  JsonStream &beginArray() { return open('['); }
  JsonStream &endArray() { return close(']'); }

  JsonStream &string(std::string_view text);
  JsonStream &number(uint64_t value);
  JsonStream &number(int64_t value);
  JsonStream &boolean(bool value);
  JsonStream &null();
  // A value made with nlohmann: written by its dump(), indented to this depth.
  JsonStream &value(const Json &json);

  // null for an empty string, as the report's optional text fields are.
  JsonStream &stringOrNull(std::string_view text) { return text.empty() ? null() : string(text); }
  template <typename T> JsonStream &numberOrNull(const std::optional<T> &value) {
    return value ? number(std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>(*value)) : null();
  }

  // Hands what is written so far to the output stream.
  void flush();

private:
  void nextItem();
  void beforeValue();
  void quoted(std::string_view text);
  JsonStream &open(char bracket);
  JsonStream &close(char bracket);
  void newLine(size_t depth);

  std::ostream &out_;
  std::string text_;
  bool compact_;
  size_t baseDepth_;
  std::vector<bool> empty_; // per open object or array: nothing in it yet
  bool afterKey_ = false;
};

} // namespace stackwalk
