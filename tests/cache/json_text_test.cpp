// JSON text of export files: every parse failure is a Status (numbers out
// of range, deep nesting, bad syntax), and writing never throws on bytes
// that are not UTF-8.
#include "cache/json_text.h"

#include <catch2/catch.hpp>

namespace ssmtune::cache {
namespace {

TEST_CASE("parse_json_text turns every failure into a status", "[cache][json]") {
  CHECK(parse_json_text(R"({"application":"ssmtune","format":1})", "f").is_ok());
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {R"({"application":"ssmtune","format":1,"x":1e999})", "not valid JSON"},
      {R"({"x":-1e400})", "not valid JSON"},
      {"{\"a\":", "not valid JSON"},
      {"", "not valid JSON"},
      {"\xff\xfe", "not valid JSON"},
      {"\"\\udc00\"", "not valid JSON"},
  };
  for (const auto& c : cases) {
    auto r = parse_json_text(c.text, "e.json");
    INFO(c.text << " -> " << r.status().to_string());
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().rfind("e.json", 0) == 0);
    CHECK(r.status().message().find(c.says) != std::string::npos);
  }
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto r = parse_json_text(deep, "deep.json");
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().message().find("nests deeper") != std::string::npos);
  const std::string ok_depth =
      std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  CHECK(parse_json_text(ok_depth, "f").is_ok());
}

TEST_CASE("dump_json_text replaces invalid UTF-8 instead of throwing", "[cache][json]") {
  nlohmann::json j = {{"name", std::string("H200 \xff\xfe tail")}};
  std::string text;
  REQUIRE_NOTHROW(text = dump_json_text(j));
  CHECK(text.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD
  CHECK(parse_json_text(text, "f").is_ok());
}

}  // namespace
}  // namespace ssmtune::cache
