#include "JsonStream.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace stackwalk;
using Json = JsonStream::Json;

namespace {

const char *const Texts[] = {"plain /path/file.c", "quote \" and backslash \\", "tab\tnew\nline\x01\x1f\x7f",
                             "caf\xc3\xa9 \xe2\x82\xac", "bad \xff\xfe utf-8 \xc3", "lone \x80", "", "\xe2\x82"};

// A document with what the printer writes: nested and empty objects and
// arrays, numbers at both ends, null, booleans, text that nlohmann must
// escape or replace, and nlohmann values written whole, at every depth.
void writeDocument(JsonStream &json) {
  json.beginObject().key("schema").string("stackwalk/1").key("empty_object").beginObject().endObject();
  json.key("empty_array").beginArray().endArray().key("numbers").beginArray();
  json.number(uint64_t(0)).number(UINT64_MAX).number(int64_t(-42)).number(INT64_MIN).endArray();
  json.key("flags").beginArray().boolean(true).boolean(false).null().endArray();
  json.key("texts").beginArray();
  for (const char *text : Texts)
    json.string(text);
  json.endArray();
  json.key("threads").beginArray();
  for (int thread = 0; thread < 2; ++thread) {
    json.beginObject().key("tid").number(uint64_t(thread)).key("name").stringOrNull(thread ? "worker" : "");
    json.key("line").numberOrNull(thread ? std::optional<uint32_t>(7) : std::nullopt);
    json.key("whole").value(Json{{"a", Json::array({1, Json::object(), Json::array()})}, {"b", nullptr}});
    json.key("scalar").value(Json("x\xff")).key("frames").beginArray();
    for (int frame = 0; frame < thread; ++frame)
      json.beginObject().key("index").number(uint64_t(frame)).key("slots").beginArray().string("0x1").endArray().endObject();
    json.endArray().endObject();
  }
  json.endArray().endObject();
}

// The same document as nlohmann values, dumped whole.
Json documentAsTree() {
  Json texts = Json::array();
  for (const char *text : Texts)
    texts.push_back(text);
  Json threads = Json::array();
  for (int thread = 0; thread < 2; ++thread) {
    Json frames = Json::array();
    for (int frame = 0; frame < thread; ++frame)
      frames.push_back(Json{{"index", frame}, {"slots", Json::array({"0x1"})}});
    threads.push_back(Json{{"tid", thread},
                           {"name", thread ? Json("worker") : Json(nullptr)},
                           {"line", thread ? Json(7) : Json(nullptr)},
                           {"whole", Json{{"a", Json::array({1, Json::object(), Json::array()})}, {"b", nullptr}}},
                           {"scalar", "x\xff"},
                           {"frames", frames}});
  }
  return Json{{"schema", "stackwalk/1"},
              {"empty_object", Json::object()},
              {"empty_array", Json::array()},
              {"numbers", Json::array({uint64_t(0), UINT64_MAX, int64_t(-42), INT64_MIN})},
              {"flags", Json::array({true, false, nullptr})},
              {"texts", texts},
              {"threads", threads}};
}

} // namespace

TEST_CASE("JsonStream writes what nlohmann's dump of the whole would", "[json-stream]") {
  for (bool compact : {true, false}) {
    std::ostringstream streamed;
    {
      JsonStream json(streamed, compact);
      writeDocument(json);
    }
    std::string whole = documentAsTree().dump(compact ? -1 : 1, ' ', false, Json::error_handler_t::replace);
    CHECK(streamed.str() == whole);
  }
}

TEST_CASE("JsonStream nests a document at a depth", "[json-stream]") {
  std::ostringstream streamed;
  {
    JsonStream json(streamed, /*compact=*/false, /*depth=*/2);
    json.beginObject().key("a").beginArray().number(uint64_t(1)).endArray().key("b").value(Json{{"c", true}}).endObject();
  }
  CHECK(streamed.str() == "{\n   \"a\": [\n    1\n   ],\n   \"b\": {\n    \"c\": true\n   }\n  }");
}

TEST_CASE("JsonStream hands its text over only when flushed", "[json-stream]") {
  std::ostringstream streamed;
  JsonStream json(streamed, /*compact=*/true);
  json.beginArray().string("a");
  CHECK(streamed.str().empty());
  json.flush();
  CHECK(streamed.str() == "[\"a\"");
  json.endArray().flush();
  CHECK(streamed.str() == "[\"a\"]");
}
